"""Prints what a W&B offline run holds, as JSON: {"config", "summary", "history"}.

wandb 0.31 writes an offline run as its transaction log alone (run-ID.wandb; files/config.yaml
and files/wandb-summary.json appear only once it is synced), so the test reads that log: the
LevelDB log format W&B uses (a 7-byte ":W&B" header, 32 KiB blocks of records with a 7-byte
header: CRC, length, type), each record a wandb_internal_pb2.Record.
Usage: python readwandb.py RUN-FOLDER/run-ID.wandb
"""
import json, struct, sys
from wandb.proto import wandb_internal_pb2 as pb

def records(path):
    data = open(path, "rb").read()
    assert data[:4] == b":W&B", data[:7]
    pos, buf = 7, b""
    while pos + 7 <= len(data):
        left = 32768 - pos % 32768
        if left < 7:
            pos += left
            continue
        _crc, n, kind = struct.unpack("<IHB", data[pos:pos + 7])
        if kind == 0 and n == 0:
            pos += left
            continue
        chunk = data[pos + 7:pos + 7 + n]
        pos += 7 + n
        buf = chunk if kind in (1, 2) else buf + chunk
        if kind in (1, 4):
            rec = pb.Record()
            rec.ParseFromString(buf)
            yield rec

config, summary, history = {}, {}, []
for rec in records(sys.argv[1]):
    kind = rec.WhichOneof("record_type")
    items = []
    if kind == "run":
        items = [("config", i) for i in rec.run.config.update] + [("summary", i) for i in rec.run.summary.update]
    elif kind == "config":
        items = [("config", i) for i in rec.config.update]
    elif kind == "summary":
        items = [("summary", i) for i in rec.summary.update]
    elif kind == "history":
        history.append({i.key or ".".join(i.nested_key): json.loads(i.value_json) for i in rec.history.item})
    for where, i in items:
        key = i.key or ".".join(i.nested_key)
        (config if where == "config" else summary)[key] = json.loads(i.value_json)
json.dump({"config": config, "summary": summary, "history": history}, sys.stdout)
