"""The run's calibrations, once per language it is asked in (before the first answer's ceiling
starts): the gate's threshold from the model's P(yes) over the shipped calibration set
(`gate.calibrate`), the answer checks its answers to the same set earn (`decide.switch`), and the
speaker decline's margin from the set's recorded margins (no model asked). Called by
`model_inference`.

With `Settings.calibration_cache`, the gate's scores and the model's replies (not the switches) are
kept per model, set and asks; the next run of the same model takes them and decides the switches
anew with its own code (a CPU reader needs half an hour for the set). Nothing raises out of
`ensure` (StopRun aside): a calibration that fails leaves its decline off and says why.
"""
from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Optional

from . import prompts
from .memory import decide, gate
from .memory.dialogue import Settings
from .memory.embed import Embedder
from .memory.llm import CALIBRATE, LLM, StopRun

log = logging.getLogger("gigamemory")


class Calibrator:
    """Per language: `calibrations` (the gate's), `speaker_calibrations`, and `speaker_thresholds`
    and `switches`, which the dialogues' memories share. `llm` is the backend as built (its
    `identity` keys a kept calibration), `guarded` the same behind the run's guard."""

    def __init__(self, llm: LLM, guarded: LLM, embedder: Embedder, settings: Settings):
        self.llm, self._llm, self.embedder, self.settings = llm, guarded, embedder, settings
        self.calibrations: dict[str, gate.Calibration] = {}
        self.speaker_calibrations: dict[str, gate.Calibration] = {}
        self.speaker_thresholds: dict[str, float] = {}
        self.switches: dict[str, decide.Switches] = {}
        self._sets: dict[Path, list] = {}

    def ensure(self, lang: str) -> None:
        """The calibrations for `lang`, once per run: taken from a kept one, or asked of the model
        now (and kept), or in `kept` mode with none to take, every check on uncalibrated."""
        if lang in self.calibrations:
            return
        path = self._calibration_file(lang)[0]
        kept = self._kept(lang, path)
        if kept is not None and kept.is_file() and self._take_kept(lang, kept):
            pass
        elif self.settings.gate == "kept" and path is not None:  # none to take: asked nothing, as with the gate off
            why = ("no calibration_cache to take one from" if kept is None
                   else f"the calibration kept at {kept} is not one this code reads" if kept.is_file()
                   else f"no calibration of {self.llm.identity} kept at {kept} "
                        "(a run with the gate calibrated keeps one)")
            self.calibrations[lang] = gate.Calibration(lang, False, why)
            self._set_switches(lang, decide.Switches(frozenset(decide.CHECKS), None,
                                                     {"checks": f"all on, not calibrated: {why}"}))
        else:
            replies = self._calibrate_now(lang)
            failed = "calibration failed" in self.calibrations[lang].why + str(self.switches[lang].why)
            if kept is not None and self.settings.gate != "kept" and not failed:  # a failed one is asked again
                try:
                    write_kept(kept, self.llm.identity, path.name, self.calibrations[lang], replies)
                except OSError:
                    log.exception("gigamemory: the calibration could not be kept in %s", kept)
        try:
            speaker = self._speaker_calibration(lang)
        except Exception as error:  # the speaker decline off; the answers go on
            log.exception("gigamemory: the speaker decline's calibration failed")
            speaker = gate.Calibration(lang, False, f"calibration failed: {type(error).__name__}: {error}")
        self.speaker_calibrations[lang] = speaker
        if speaker.on:
            self.speaker_thresholds[lang] = speaker.threshold
        log.info("gigamemory: speaker decline (%s) %s: %s; threshold %s, AUC %s", lang,
                 "on" if speaker.on else "off", speaker.why, speaker.threshold, speaker.auc)

    def _calibrate_now(self, lang: str) -> Optional[list]:
        """The gate's calibration and the checks', asked of the model now. -> its replies to the
        calibration prompts (None where none were asked or the asking failed), to keep."""
        replies = None
        try:
            found = self._calibration(lang)
        except StopRun:
            raise
        except Exception as error:  # a gate that cannot calibrate is off; the answers go on
            log.exception("gigamemory: the decline gate's calibration failed")
            found = gate.Calibration(lang, False, f"calibration failed: {type(error).__name__}: {error}")
        self.calibrations[lang] = found
        log.info("gigamemory: decline gate (%s) %s: %s; threshold %s, AUC %s over %d calls; scores %s",
                 lang, "on" if found.on else "off", found.why, found.threshold, found.auc, found.calls,
                 [[i, a, p] for i, a, p in found.scores])
        try:
            replies = self._asked(lang)
            switches = self._switches(lang, found, replies)
        except StopRun:
            raise
        except Exception as error:  # no calibration, no check earned: the reader's own answers stand
            log.exception("gigamemory: the answer checks' calibration failed")
            switches = decide.Switches(frozenset(), None, {"checks": f"off: calibration failed: "
                                                                     f"{type(error).__name__}: {error}"})
        self._set_switches(lang, switches)
        return replies

    def _set_switches(self, lang: str, switches: decide.Switches) -> None:
        self.switches[lang] = switches
        log.info("gigamemory: answer checks (%s): %s", lang,
                 "; ".join(f"{name} {said}" for name, said in switches.why.items()))

    def _kept(self, lang: str, path: Optional[Path]) -> Optional[Path]:
        """Where this model's calibration on the set `path` is kept; None where nothing is (the contest)."""
        if not self.settings.calibration_cache or path is None:
            return None
        return kept_path(Path(self.settings.calibration_cache), self.llm.identity, self.settings, lang, path)

    def _take_kept(self, lang: str, kept: Path) -> bool:
        """The kept calibration taken, its switches decided now; False (nothing taken) where the file
        is not one this code keeps: an older form that kept the switches, or a broken one."""
        try:
            data = json.loads(kept.read_text(encoding="utf-8"))
            found = gate.Calibration(**{**data["gate"], "scores": tuple(tuple(s) for s in data["gate"]["scores"])})
            replies = data["replies"]
            if replies is not None:
                replies = [None if r is None else decide.Reply(r["answer"], tuple(r["quotes"])) for r in replies]
            switches = self._switches(lang, found, replies)
        except StopRun:
            raise
        except Exception as error:  # an older form, a broken file: nothing taken, nothing set
            log.warning("gigamemory: the kept calibration %s is not one this code reads (%s: %s); not taken",
                        kept, type(error).__name__, error)
            return False
        self.calibrations[lang] = found
        self._set_switches(lang, switches)
        log.info("gigamemory: calibration (%s) kept from an earlier run of %s: %s", lang, self.llm.identity, kept)
        return True

    def _asked(self, lang: str) -> Optional[list]:
        """The model's replies to the calibration prompts as the stage asks them (`decide.replies`);
        None where no calibration pass is made (the gate off, or no set for the language)."""
        path, _ = self._calibration_file(lang)
        if self.settings.gate == "off" or path is None:
            return None
        items = self._calibration_set(path)
        replies, _ = decide.replies(self._llm, [item["messages"] for item in items], lang,
                                    self.settings.answer_max_tokens, CALIBRATE)
        return replies

    def _switches(self, lang: str, found: gate.Calibration, replies: Optional[list]) -> decide.Switches:
        """The checks the model earns (`decide.switch`) by its `replies`, beside the gate's `found`."""
        if self.settings.gate == "off":  # no calibration pass at all: every check on, uncalibrated
            return decide.Switches(frozenset(decide.CHECKS), None,
                                   {"checks": "all on, not calibrated: the gate is off in the config, and with it "
                                              "the calibration pass"})
        path, where = self._calibration_file(lang)
        if path is None or replies is None:
            return decide.Switches(frozenset(), None, {"checks": f"off: no calibration set for {lang!r} in {where}"})
        p_yes = {i: p for i, _, p in found.scores}
        rows = [decide.Calibrated.of(item, reply, p_yes.get(item["id"]))
                for item, reply in zip(self._calibration_set(path), replies)]
        return decide.switch(rows, found.threshold if found.on else None, self.settings.gate_no_answer_share)

    def _calibration_set(self, path: Path) -> list:
        """The calibration prompts of `path` (`gate.load_set`), read once a run: the gate, the checks
        and the speaker decline each calibrate on them."""
        if path not in self._sets:
            self._sets[path] = gate.load_set(path)
        return self._sets[path]

    def _calibration_file(self, lang: str):
        """The calibration set for `lang` in the shipped folder or the configured one, and where it was looked for."""
        folders = [gate.CALIBRATION_DIR] + ([Path(self.settings.calibration_dir)] if self.settings.calibration_dir
                                            else [])
        return gate.calibration_file(lang, self.settings.context_chars, folders), ", ".join(map(str, folders))

    def _speaker_calibration(self, lang: str) -> gate.Calibration:
        if not self.settings.decline_speaker:
            return gate.Calibration(lang, False, "off in the config")
        path, where = self._calibration_file(lang)
        if path is None:
            return gate.Calibration(lang, False, f"no calibration set for {lang!r} in {where}")
        return gate.speaker_calibration(lang, self._calibration_set(path), self.embedder.identity,
                                        **gate.rule_of(self.settings))

    def _calibration(self, lang: str) -> gate.Calibration:
        if self.settings.gate == "off":
            return gate.Calibration(lang, False, "off in the config")
        if not self.llm.gives_logprobs:
            return gate.Calibration(lang, False, f"the backend {self.llm.name} gives no logprobs")
        path, where = self._calibration_file(lang)
        if path is None:
            return gate.Calibration(lang, False, f"no calibration set for {lang!r} in {where} "
                                                 f"(tools/calibration.py --lang {lang} builds one)")
        items = self._calibration_set(path)
        found, _ = gate.read(self._llm, [item["messages"] for item in items], lang, CALIBRATE)
        scores = [(item["id"], bool(item["answerable"]), p) for item, p in zip(items, found)]
        return gate.calibrate(lang, scores, **gate.rule_of(self.settings))


def kept_path(folder: Path, identity: str, settings: Settings, lang: str, path: Path) -> Path:
    """Where the calibration of the model `identity` on the set `path` is kept in `folder`, named by
    all it depends on: the model, the set's bytes, the gate's mode and rule, the asks and schema."""
    mode = "calibrated" if settings.gate == "kept" else settings.gate  # a "kept" run looks for what "calibrated" kept
    what = json.dumps([identity, path.name, hashlib.sha256(path.read_bytes()).hexdigest(), mode,
                       gate.rule_of(settings), gate.ask(lang), prompts.text("answer", lang, "cite"),
                       decide.CITE_SCHEMA, decide.CITE_MAX_TOKENS, settings.answer_max_tokens], ensure_ascii=False)
    return folder / f"{lang}.{hashlib.sha256(what.encode()).hexdigest()[:16]}.json"


def write_kept(kept: Path, identity: str, set_name: str, found: gate.Calibration, replies: Optional[list]) -> None:
    """A calibration kept: the gate's (`found`, its scores inside) and the model's replies to the set
    (a `decide.Reply` or None each; None: none asked), the model and the set named in it."""
    kept_replies = None if replies is None else [
        None if r is None else {"answer": r.answer, "quotes": list(r.quotes)} for r in replies]
    kept.parent.mkdir(parents=True, exist_ok=True)
    kept.write_text(json.dumps({"model": identity, "set": set_name, "gate": found.as_dict(),
                                "replies": kept_replies}, ensure_ascii=False, indent=1), encoding="utf-8")
