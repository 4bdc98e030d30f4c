"""Builds a pure-Python wheel of PyYAML from its pinned sdist (PyYAML publishes no py3-none-any
wheel; without its C extension it runs on its pure-Python fallback). Deterministic: fixed
timestamps and order, so the same sdist always gives the same bytes.

usage: python3 pure_wheel.py <pyyaml-X.tar.gz> <out dir>   (prints the wheel's file name)
"""
import base64
import hashlib
import io
import os
import sys
import tarfile
import zipfile

sdist, out_dir = sys.argv[1], sys.argv[2]
with tarfile.open(sdist) as tar:
    names = tar.getnames()
    top = names[0].split("/")[0]
    version = top.rsplit("-", 1)[1]
    pkg_info = tar.extractfile(top + "/PKG-INFO").read()
    license_text = tar.extractfile(top + "/LICENSE").read()
    sources = {}
    for m in tar.getmembers():
        rel = m.name[len(top) + 1:]
        if m.isfile() and rel.startswith("lib/yaml/") and rel.endswith(".py"):
            sources[rel[len("lib/"):]] = tar.extractfile(m).read()

di = "PyYAML-%s.dist-info" % version
files = dict(sorted(sources.items()))
files[di + "/METADATA"] = pkg_info
files[di + "/LICENSE"] = license_text
files[di + "/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: foxden xtask (pure-Python fallback)\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
files[di + "/top_level.txt"] = b"yaml\n"


def digest(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


record = "".join("%s,%s,%d\n" % (p, digest(d), len(d)) for p, d in files.items()) + di + "/RECORD,,\n"
files[di + "/RECORD"] = record.encode()
name = "PyYAML-%s-py3-none-any.whl" % version
buf = io.BytesIO()
with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
    for p, d in files.items():
        info = zipfile.ZipInfo(p, date_time=(1980, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = 0o644 << 16
        z.writestr(info, d)
with open(os.path.join(out_dir, name), "wb") as f:
    f.write(buf.getvalue())
print(name)
