#!/usr/bin/env python3
"""cloud-init's own merging code as a line-oriented JSON service, for dm's differential merge test
(test/merge/cloud-init-differential.test.ts) and bench (bench/merge.ts).

Run with cloud-init on PYTHONPATH (test/support/cloud-init.sh prints the directory). One JSON
request per line on stdin, one JSON answer per line on stdout. Mappings travel as
{"$map": [[key, value], ...]} both ways so that key order survives.

Requests and answers:
  {"mode": "userdata", "parts": [doc, ...], "headers": [{...} | null, ...]}
      -> {"result": doc, "skipped": [{"index": i, "kind": "ValueError"}, ...]}
     Each part goes through cloud-init's CloudConfigPartHandler as YAML text, the way
     tests/unittests/test_merging.py feeds it; a part the handler rejects is recorded as skipped.
  {"mode": "mergemanydict", "sources": [doc, ...], "reverse": bool}   -> {"result": doc} | {"error": kind}
  {"mode": "merger", "merge_how": str | list, "a": value, "b": value}  -> {"result": value} | {"error": kind}
  {"mode": "bench", "merge_how": str, "a": doc, "b": doc, "iterations": n}
      -> {"seconds": [t, ...]}: per iteration, construct(merge_how) + merge(merge({}, a), b)
  {"mode": "bench_e2e", "merge_how": str, "a_text": str, "b_text": str, "iterations": n, "libyaml": bool}
      -> {"seconds": [t, ...], "bytes": n}: per iteration, what a user of cloud-init runs — YAML text
     loaded with cloud-init's own loader (safeyaml.load), construct(merge_how) + merge(a, b), and
     the result dumped with cloud-init's safeyaml.dumps; with "libyaml", PyYAML's C loader and
     dumper instead (faster than cloud-init itself runs).
  {"mode": "version"} -> {"version": "..."}
"""
import json
import logging
import sys
import time

import yaml
from cloudinit import mergers, safeyaml, util, version
from cloudinit.handlers import CONTENT_END, CONTENT_START, cloud_config

KINDS = (ValueError, ImportError, KeyError, TypeError, IndexError, AttributeError)


def kind_of(exc_type):
    for cls in exc_type.__mro__:
        if cls in KINDS:
            return cls.__name__
    return exc_type.__name__


def decode(v):
    if isinstance(v, dict):
        return {k: decode(x) for k, x in v["$map"]}
    if isinstance(v, list):
        return [decode(x) for x in v]
    return v


def encode(v):
    if isinstance(v, dict):
        return {"$map": [[k, encode(x)] for k, x in v.items()]}
    if isinstance(v, (list, tuple)):
        return [encode(x) for x in v]
    return v


class Capture(logging.Handler):
    """Collects the exception classes the handler logs when it rejects a part."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.kinds = []

    def emit(self, record):
        if record.exc_info and record.exc_info[0] is not None:
            self.kinds.append(kind_of(record.exc_info[0]))
        elif isinstance(record.args, tuple):
            for a in record.args:
                if isinstance(a, BaseException):
                    self.kinds.append(kind_of(type(a)))


class NoPaths:
    def get_ipath(self, _name=None):
        return None


CAPTURE = Capture()
_log = logging.getLogger(cloud_config.__name__)
_log.addHandler(CAPTURE)
_log.setLevel(logging.DEBUG)
_log.propagate = False


def userdata(req):
    handler = cloud_config.CloudConfigPartHandler(NoPaths())
    handler.cloud_fn = None
    handler.handle_part(None, CONTENT_START, None, None, None, None)
    skipped = []
    headers = req.get("headers") or []
    for i, part in enumerate(req["parts"]):
        payload = yaml.safe_dump(decode(part), sort_keys=False, allow_unicode=True)
        h = headers[i] if i < len(headers) and headers[i] is not None else {}
        CAPTURE.kinds = []
        before = len(handler.file_names)
        handler.handle_part(None, "text/cloud-config", "part%d" % i, payload, None, dict(h))
        if len(handler.file_names) == before:
            kind = CAPTURE.kinds[0] if CAPTURE.kinds else "unknown"
            skipped.append({"index": i, "kind": kind})
    result = handler.cloud_buf if handler.cloud_buf is not None else {}
    handler.handle_part(None, CONTENT_END, None, None, None, None)
    return {"result": encode(result), "skipped": skipped}


def parse_how(how):
    if isinstance(how, str):
        return mergers.string_extract_mergers(how)
    return mergers.dict_extract_mergers({"merge_how": how})


def answer(req):
    mode = req["mode"]
    if mode == "version":
        return {"version": version.version_string()}
    if mode == "userdata":
        return userdata(req)
    if mode == "bench_e2e":
        fast = req.get("libyaml", False)

        def load(text):
            return yaml.load(text, Loader=yaml.CSafeLoader) if fast else safeyaml.load(text)

        def dump(value):
            if fast:
                return yaml.dump(value, Dumper=yaml.CSafeDumper, default_flow_style=False, sort_keys=False)
            return safeyaml.dumps(value)

        times = []
        out = ""
        for _ in range(req.get("iterations", 3)):
            start = time.perf_counter()
            a, b = load(req["a_text"]), load(req["b_text"])
            merger = mergers.construct(parse_how(req["merge_how"]))
            out = dump(merger.merge(a, b))
            times.append(time.perf_counter() - start)
        return {"seconds": times, "bytes": len(out.encode("utf-8"))}
    if mode == "bench":
        a, b = decode(req["a"]), decode(req["b"])
        times = []
        for _ in range(req.get("iterations", 10)):
            start = time.perf_counter()
            merger = mergers.construct(parse_how(req["merge_how"]))
            merger.merge(merger.merge({}, a), b)
            times.append(time.perf_counter() - start)
        return {"seconds": times}
    try:
        if mode == "mergemanydict":
            result = util.mergemanydict([decode(s) for s in req["sources"]], reverse=req.get("reverse", False))
        elif mode == "merger":
            merger = mergers.construct(parse_how(decode(req["merge_how"])))
            result = merger.merge(decode(req["a"]), decode(req["b"]))
        else:
            return {"error": "unknown mode %r" % (mode,)}
    except Exception as e:  # every class is an answer: the test compares kinds
        return {"error": kind_of(type(e)), "message": str(e)}
    return {"result": encode(result)}


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            out = answer(json.loads(line))
        except Exception as e:  # a broken request must not end the service
            out = {"fatal": "%s: %s" % (type(e).__name__, e)}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
