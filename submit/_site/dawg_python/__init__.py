from .dawgs import DAWG, BytesDAWG, CompletionDAWG, IntCompletionDAWG, IntDAWG, RecordDAWG
from .wrapper import Dictionary
