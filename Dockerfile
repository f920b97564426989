# An offline rehearsal of the contest: the image's stack (Python 3.10, torch 2.7.0+cu126,
# vllm 0.9.2, transformers 4.53.2, accelerate 1.9.0, numpy 1.26.4) on a public CUDA base,
# our harness replica, and the built zip. Needs a GPU host with Docker (not our CI machines);
# on ours, `make docker-rehearsal` builds its CPU counterpart (tools/docker_rehearsal/, docs/submitting.md).
#
#   make zip
#   docker build -t gigamemory-rehearsal .
#   docker run --rm --gpus all --network none \
#     -v /path/to/GigaChat-20B-A3B-instruct-v1.5-bf16:/app/models/GigaChat-20B-A3B-instruct-v1.5-bf16:ro \
#     -v "$PWD/dist:/dist:ro" -v "$PWD/../shared/data/gigamemory:/data:ro" -v "$PWD/rehearsal:/out" \
#     gigamemory-rehearsal
FROM nvidia/cuda:12.6.3-cudnn-runtime-ubuntu22.04

ENV DEBIAN_FRONTEND=noninteractive PIP_NO_CACHE_DIR=1 PYTHONUNBUFFERED=1
RUN apt-get update && apt-get install -y --no-install-recommends python3.10 python3-pip unzip git \
    && rm -rf /var/lib/apt/lists/* && ln -sf /usr/bin/python3.10 /usr/bin/python
RUN python -m pip install --upgrade pip \
    && python -m pip install torch==2.7.0 --index-url https://download.pytorch.org/whl/cu126 \
    && python -m pip install vllm==0.9.2 transformers==4.53.2 accelerate==1.9.0 numpy==1.26.4 \
       huggingface-hub==0.34.3 bitsandbytes==0.46.1 gguf==0.17.1 datasets==4.0.0 seaborn

WORKDIR /app
# Only the harness replica and our stand-ins travel in the image; the submission comes from the zip.
COPY local_eval /app/local_eval
COPY tools/rehearse.py /app/tools/rehearse.py
CMD unzip -q -o /dist/submission.zip -d /app/src/submit \
    && python /app/tools/rehearse.py --unpacked /app/src --data /data/format_example.jsonl --out /out
