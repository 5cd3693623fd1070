"""Copies onnx.proto with its package renamed to zt_onnx (build step of
src/meson.build): the library's generated code then registers a file of
its own name in protobuf's descriptor pool, never clashing with the onnx
library's in one process. Field numbers, and so the wire format, are
unchanged."""
import re
import sys

src, dst = sys.argv[1], sys.argv[2]
with open(src, encoding="utf-8") as f:
    text = f.read()
text, n = re.subn(r"^package\s+onnx\s*;", "package zt_onnx;", text, flags=re.M)
if n != 1:
    sys.exit("%s: expected one 'package onnx;' line, found %d" % (src, n))
if "optimize_for = LITE_RUNTIME" not in text:
    text += "\noption optimize_for = LITE_RUNTIME;\n"
with open(dst, "w", encoding="utf-8") as f:
    f.write(text)
