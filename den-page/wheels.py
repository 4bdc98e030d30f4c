# foxden's wheel installer: runs inside the worker (embedded in worker.js by the build) right
# after the interpreter boots and before any user code, on the wheels the host fetched and
# checked against their SHA-256 pins. No network and no pip: each wheel is read as a zip.
#
# install(wheels, site) checks EVERY wheel fully before writing anything:
#   - it opens as a zip of at most MAX_FILES files (counted from its end records before zipfile
#     reads its central directory), has one {name}-{version}.dist-info, and no other .dist-info or
#     .egg-info, with WHEEL (Root-Is-Purelib: true, Wheel-Version 1.x), METADATA (whose Name
#     matches the file name) and RECORD;
#   - RECORD lists every file of the zip, and every file's sha256 and size match its RECORD line;
#   - no path escapes site-packages (absolute, "..", backslashes, drive letters are refused);
#   - the files' sizes (as the zip declares them) add up to at most MAX_UNPACKED_BYTES for all
#     the wheels together, and each file is read in bounded chunks and never past its declared
#     size, so a small wheel that inflates to gigabytes (a zip bomb) is refused unread;
#   - no two wheels write the same file;
#   - each Requires-Dist whose environment marker holds on Pyodide (extra == markers are false:
#     extras are never installed) names a project among the given wheels, at a version its
#     specifier allows (not a direct URL); Requires-Python allows this Python.
# Then it writes them all (purelib and platlib data go to site-packages; scripts, headers and
# data are skipped: a den has no bin/ or include/). A failure while writing removes what was
# written. Errors are WheelError(package, message): the host turns them into DenLoadError
# (stage "package", with the package's name).
#
# Tested natively with CPython by `cargo test -p foxden-core wheels` (element/core/tests/wheels.rs).

import base64
import csv
import email.parser
import hashlib
import io
import os
import platform
import re
import struct
import sys
import zipfile


# Most bytes all the wheels of a den unpack to, together (256 MiB: four times the 64 MiB the
# host lets their zips weigh).
MAX_UNPACKED_BYTES = 256 << 20
# A member is inflated this much at a time.
_CHUNK = 1 << 20


class WheelError(Exception):
    def __init__(self, package, message):
        super().__init__("%s: %s" % (package, message))
        self.package = package
        self.message = message


def normalize(name):
    """PEP 503."""
    return re.sub(r"[-_.]+", "-", name).lower()


# --- versions (PEP 440, the parts dependency pins use) ---
_VERSION = re.compile(
    r"^v?(?:(\d+)!)?(\d+(?:\.\d+)*)"
    r"(?:[-_.]?(a|b|c|rc|alpha|beta|pre|preview)[-_.]?(\d*))?"
    r"(?:-(\d+)|[-_.]?(?:post|rev|r)[-_.]?(\d*))?"
    r"(?:[-_.]?dev[-_.]?(\d*))?"
    r"(?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?$",
    re.I,
)
_PRE = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2, "pre": 2, "preview": 2}


def version_key(v):
    # Longer is no real version (and int() refuses a run of more than 4300 digits).
    if len(v) > 256:
        return None
    m = _VERSION.match(v.strip())
    if not m:
        return None
    epoch, release, pre_l, pre_n, post_a, post_b, dev = m.groups()
    rel = [int(x) for x in release.split(".")]
    while len(rel) > 1 and rel[-1] == 0:
        rel.pop()
    post = post_a if post_a is not None else post_b
    # Ordering: dev < pre < final < post.
    if pre_l is not None:
        pre = (0, _PRE[pre_l.lower()], int(pre_n or 0))
    elif dev is not None and post is None:
        pre = (-1, 0, 0)
    else:
        pre = (1, 0, 0)
    return (int(epoch or 0), tuple(rel), pre, -1 if post is None else int(post or 0), 1 << 30 if dev is None else int(dev or 0))


def _release(v):
    """(epoch, release numbers) of a version, or None."""
    m = _VERSION.match(v.strip()) if len(v) <= 256 else None
    return (int(m.group(1) or 0), [int(x) for x in m.group(2).split(".")]) if m else None


def version_ok(version, spec):
    """Whether version satisfies a specifier set such as '>=1.1,<1.4' (PEP 440 operators)."""
    have = version_key(version)
    if have is None:
        return False
    for clause in filter(None, (c.strip() for c in spec.split(","))):
        m = re.match(r"^(~=|===|==|!=|<=|>=|<|>)\s*(\S+)$", clause)
        if not m:
            raise ValueError("unreadable version specifier %r" % clause)
        op, want = m.groups()
        if op in ("==", "!=") and want.endswith(".*"):
            prefix = _release(want[:-2])
            rel = _release(version)
            match = (prefix is not None and rel is not None and rel[0] == prefix[0]
                     and (rel[1] + [0] * len(prefix[1]))[: len(prefix[1])] == prefix[1])
            if (op == "==") != match:
                return False
            continue
        if op == "===":
            if version != want:
                return False
            continue
        key = version_key(want)
        if key is None:
            raise ValueError("unreadable version %r" % want)
        if op == "~=":
            epoch, rel = _release(want)
            mine = _release(version)
            if len(rel) < 2 or have < key or mine[0] != epoch or (mine[1] + [0] * len(rel))[: len(rel) - 1] != rel[:-1]:
                return False
            continue
        if op in ("==", "!=") and "+" in want:
            # A local label in the specifier must match too (without one, any label matches).
            same = have == key and _local(version) == _local(want)
            ok = same if op == "==" else not same
        else:
            ok = {"==": have == key, "!=": have != key, "<=": have <= key, ">=": have >= key,
                  "<": have < key, ">": have > key}[op]
        if ok and op == ">" and key[3] == -1 and have[3] != -1 and have[:3] == key[:3]:
            ok = False  # >V allows no post-release of V (unless V is one)
        if ok and op == "<" and not _is_pre(key) and _is_pre(have) and have[:2] == key[:2]:  # same epoch and release
            ok = False  # <V allows no pre-release (or dev release) of V (unless V is one)
        if not ok:
            return False
    return True


def _local(v):
    return v.strip().lower().partition("+")[2].replace("-", ".").replace("_", ".")


def _is_pre(key):
    return key[2][0] != 1 or key[4] != 1 << 30


# --- environment markers (PEP 508) ---
def default_environment():
    """The marker environment of the running interpreter (Pyodide's, in a den)."""
    impl = sys.implementation
    iv = impl.version
    impl_version = "%d.%d.%d" % (iv.major, iv.minor, iv.micro)
    if iv.releaselevel != "final":
        impl_version += iv.releaselevel[0] + str(iv.serial)
    return {
        "implementation_name": impl.name,
        "implementation_version": impl_version,
        "os_name": os.name,
        "platform_machine": platform.machine(),
        "platform_release": platform.release(),
        "platform_system": platform.system(),
        "platform_version": platform.version(),
        "python_full_version": platform.python_version(),
        "platform_python_implementation": platform.python_implementation(),
        "python_version": "%d.%d" % sys.version_info[:2],
        "sys_platform": sys.platform,
    }


_TOKEN = re.compile(r"\s*(?:(\()|(\))|(===|==|!=|<=|>=|~=|<|>|not\s+in\b|in\b)|(and\b|or\b)|('[^']*'|\"[^\"]*\")|([A-Za-z_][A-Za-z0-9_.]*))")
_VERSION_VARS = {"python_version", "python_full_version", "implementation_version"}
# The names of PEP 345 (and older metadata), which packaging, so pip, still reads.
_LEGACY_VARS = {
    "os.name": "os_name", "sys.platform": "sys_platform", "platform.version": "platform_version",
    "platform.machine": "platform_machine", "platform.python_implementation": "platform_python_implementation",
    "python_implementation": "platform_python_implementation",
}


def marker_holds(marker, env):
    """Evaluates a PEP 508 marker; `extra` is "" (extras are never installed)."""
    tokens = []
    pos = 0
    marker = marker.strip()
    while pos < len(marker):
        m = _TOKEN.match(marker, pos)
        if not m or m.end() == pos:
            raise ValueError("unreadable marker %r" % marker)
        pos = m.end()
        kinds = ("(", ")", "op", "bool", "str", "var")
        for kind, text in zip(kinds, m.groups()):
            if text is not None:
                tokens.append((kind, re.sub(r"\s+", " ", text)))
                break
    tokens.append(("end", ""))
    i = 0

    def peek():
        return tokens[i]

    def take(kind=None):
        nonlocal i
        t = tokens[i]
        if kind and t[0] != kind:
            raise ValueError("unreadable marker %r" % marker)
        i += 1
        return t

    def value():
        kind, text = take()
        if kind == "str":
            return ("str", text[1:-1])
        if kind == "var":
            text = _LEGACY_VARS.get(text, text)
            if text == "extra":
                return ("var", "extra", "")
            if text not in env:
                raise ValueError("unknown marker variable %r" % text)
            return ("var", text, env[text])
        raise ValueError("unreadable marker %r" % marker)

    def compare():
        if peek()[0] == "(":
            take("(")
            v = disj()
            take(")")
            return v
        left = value()
        op = take("op")[1]
        right = value()
        lv, rv = left[-1], right[-1]
        var = left[1] if left[0] == "var" else right[1] if right[0] == "var" else ""
        if op in ("in", "not in"):
            return (lv in rv) == (op == "in")
        if var == "extra":
            return op == "==" and normalize(lv) == normalize(rv) or op == "!=" and normalize(lv) != normalize(rv)
        if var in _VERSION_VARS and version_key(lv) is not None and op in ("==", "!=") and rv.endswith(".*"):
            return version_ok(lv, op + rv)  # a prefix match (python_version == "3.*")
        if var in _VERSION_VARS and version_key(lv) is not None and version_key(rv) is not None and op != "===":
            return version_ok(lv, op + rv)
        return {"==": lv == rv, "!=": lv != rv, "<": lv < rv, ">": lv > rv, "<=": lv <= rv,
                ">=": lv >= rv, "===": lv == rv, "~=": lv == rv}[op]

    def conj():
        v = compare()
        while peek() == ("bool", "and"):
            take()
            w = compare()
            v = v and w
        return v

    def disj():
        v = conj()
        while peek() == ("bool", "or"):
            take()
            w = conj()
            v = v or w
        return v

    result = disj()
    take("end")
    return result


# Longest Requires-Dist line read (a real one is a few dozen characters).
MAX_REQUIREMENT = 4096
# Name, [extras], the rest: no two parts can match the same characters, and the rest matches
# anything, so the match never backtracks (a pattern whose optional parts could all take the same
# spaces took a minute to refuse "a", 400 spaces and "@").
_REQ = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)", re.S)


def parse_requirement(text):
    """(normalised name, specifier, marker or None) of a Requires-Dist line; the specifier of a
    direct URL reference (name @ url) is "@ " and its URL."""
    if len(text) > MAX_REQUIREMENT:
        raise ValueError("a requirement longer than %d characters" % MAX_REQUIREMENT)
    # The marker follows the first ";", but for a direct URL reference the first ";" after
    # whitespace (PEP 508: a URL may hold ";", and must be followed by a space before its marker).
    if "@" in text.partition(";")[0]:
        cut = re.search(r"\s;", text)
        head, marker = (text[:cut.start()], text[cut.end():]) if cut else (text, "")
    else:
        head, _, marker = text.partition(";")
    m = _REQ.match(head.strip())
    if not m:
        raise ValueError("unreadable requirement %r" % text[:200])
    name, _extras, rest = m.groups()
    if rest.startswith("@"):
        url = rest[1:].strip()
        if not url or len(url.split()) != 1:
            raise ValueError("unreadable requirement %r" % text[:200])
        spec = "@ " + url
    elif rest.startswith("("):
        spec = rest[1:-1].strip()
        if not rest.endswith(")") or "(" in spec or ")" in spec:
            raise ValueError("unreadable requirement %r" % text[:200])
    elif "@" in rest:
        raise ValueError("unreadable requirement %r" % text[:200])
    else:
        spec = rest
    return normalize(name), spec, marker.strip() or None


# --- one wheel ---
def _parse_wheel_name(file):
    stem = file[:-4] if file.endswith(".whl") else None
    parts = stem.split("-") if stem else []
    if len(parts) not in (5, 6):
        raise WheelError(file, "%r is not a wheel file name" % file)
    return normalize(parts[0]), parts[1]


def _project_of(file):
    """The normalised project name a wheel's file name gives (what errors name), else the file name."""
    try:
        return _parse_wheel_name(str(file))[0]
    except WheelError:
        return str(file)


def _safe(path):
    """A zip member path that stays inside site-packages, or None."""
    if not path or "\\" in path or path.startswith("/") or "\x00" in path or re.match(r"^[A-Za-z]:", path):
        return None
    parts = path.split("/")
    if any(p in ("", ".", "..") for p in parts[:-1]) or parts[-1] in (".", ".."):
        return None
    return path


def _is_metadata(top):
    """Whether importlib.metadata takes a top-level name in site-packages for a project's metadata."""
    return top.lower().endswith((".dist-info", ".egg-info"))


# Members that hold compiled code (CPython extensions, shared libraries, WebAssembly).
_COMPILED = (".so", ".pyd", ".dylib", ".dll", ".wasm")


def _canonical_version(v):
    """A version as PEP 440 compares them (1.0 is 1.0.0, 1.0rc1 is 1.0c1, 1.0.post1 is 1.0-1),
    with its local label; its lower-case text when it is not a PEP 440 version."""
    key = version_key(v.replace("_", "-"))
    return (key, _local(v)) if key is not None else v.strip().lower()


# Most files a wheel may hold.
MAX_FILES = 50000


def _zip_refusal(data):
    """Why the zip `data` is refused before zipfile reads its central directory, or None (then
    zipfile reads it, or refuses it). zipfile builds an object for every entry, over a million in
    a 64 MiB zip, before anything can count them, and it reads as many entries as the directory's
    declared size holds, whatever count the end records declare."""
    # The end record where zipfile finds it: the last 22 bytes when there is no comment, else the
    # last signature in the 64 KiB a comment may take.
    end = len(data) - 22
    if end < 0:
        return None
    if data[end:end + 4] != b"PK\x05\x06" or data[end + 20:end + 22] != b"\0\0":
        end = data.rfind(b"PK\x05\x06", max(end - 0x10000, 0))
        if end < 0 or end + 22 > len(data):
            return None
    counts = list(struct.unpack_from("<2H", data, end + 8))  # on this disk, in all
    (size,) = struct.unpack_from("<L", data, end + 12)
    locator = end - 20
    if locator >= 0 and data[locator:locator + 4] == b"PK\x06\x07":
        # A zip64 end record, whose counts and size zipfile then reads: CPython 3.11 looks for it
        # right before the locator, 3.14 first where the locator points; both are counted.
        (pointed,) = struct.unpack_from("<Q", data, locator + 8)
        records = [at for at in {locator - 56, pointed} if 0 <= at <= locator - 56 and data[at:at + 4] == b"PK\x06\x06"]
        if not records:
            return "not a readable zip file (its zip64 end record is missing)"
        counts = [c for c in counts if c != 0xFFFF]  # 0xFFFF: see the zip64 record
        for at in records:
            counts += struct.unpack_from("<2Q", data, at + 24)
            size = min(size, struct.unpack_from("<Q", data, at + 40)[0])
    if max(counts, default=0) > MAX_FILES:
        return "more than %d files" % MAX_FILES
    if len(set(counts)) > 1 or max(counts, default=0) * 46 > size:
        return "not a readable zip file (its end records disagree on its files)"
    # Every entry zipfile would read starts with this signature, before the end record.
    if data.count(b"PK\x01\x02", 0, end) > MAX_FILES:
        return "more than %d files" % MAX_FILES
    return None


def _record_digest(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


class _Wheel:
    """One checked wheel: what to write, and what it needs."""

    def __init__(self, file, data, verify=True, budget=MAX_UNPACKED_BYTES):
        name, version = _parse_wheel_name(file)
        self.file, self.name, self.version = file, name, version
        fail = lambda msg: WheelError(name, "%s: %s" % (file, msg))
        refusal = _zip_refusal(data)
        if refusal is not None:
            raise fail(refusal)
        try:
            zf = zipfile.ZipFile(io.BytesIO(data))
            infos = zf.infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError, OSError) as e:
            raise fail("not a readable zip file (%s)" % e)
        if len(infos) > MAX_FILES:
            raise fail("more than %d files" % MAX_FILES)
        members = {}
        self.contents = {}  # what the check read, kept so that the install does not read it again
        for info in infos:
            if info.is_dir():
                continue
            if _safe(info.filename) is None:
                raise fail("the path %r would escape site-packages" % info.filename[:200])
            if info.filename in members:
                raise fail("the path %r is in the zip twice" % info.filename[:200])
            if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                # zipfile inflates bzip2, LZMA and Zstandard members with no bound on what one
                # read makes (only deflate is inflated chunk by chunk): a member declaring one
                # byte could fill the worker's memory. Wheels are stored or deflated.
                raise fail("%s is compressed with method %d; foxden reads only stored or deflated wheel members"
                           % (info.filename[:200], info.compress_type))
            if info.filename.lower().endswith(_COMPILED):
                # The file name's tags are the wheel's word; its contents are what gets imported.
                raise fail("%s is compiled code; foxden installs only pure-Python wheels" % info.filename[:200])
            members[info.filename] = info
        # zipfile never reads a member past the size its directory declares (more is a CRC
        # error), so the declared sizes bound what the check and the install read.
        self.unpacked = sum(info.file_size for info in members.values())
        if self.unpacked > budget:
            raise fail("its files unpack to %d bytes, which takes the den's wheels past %d MiB unpacked in all"
                       % (self.unpacked, MAX_UNPACKED_BYTES >> 20))
        # importlib.metadata reads any top-level .dist-info or .egg-info, in any case, folder or
        # file: another project's would make it report a package that is not there (pip refuses
        # another .dist-info too).
        metadata = sorted({p.split("/", 1)[0] for p in members if _is_metadata(p.split("/", 1)[0])})
        mine = [d for d in metadata if d.endswith(".dist-info") and normalize(d[: -len(".dist-info")].rsplit("-", 1)[0]) == name]
        if len(mine) != 1 or len(metadata) != 1:
            raise fail("expected one .dist-info folder, %s-<version>.dist-info, and no other .dist-info or .egg-info, found %s"
                       % (name, [d[:100] for d in metadata[:10]] or "none"))
        self.dist_info = di = mine[0]
        folder_version = di[: -len(".dist-info")].rsplit("-", 1)[-1]
        if _canonical_version(folder_version) != _canonical_version(version):
            raise fail("its .dist-info folder says version %s, its file name %s" % (folder_version[:50], version))

        def read(path):
            try:
                info = members[path]
            except KeyError:
                raise fail("%s is missing" % path)
            try:
                # In chunks: zf.read() inflates a deflated member in one call of up to 2 GiB
                # before it cuts the output at the declared size.
                parts = []
                with zf.open(info) as f:
                    while chunk := f.read(_CHUNK):
                        parts.append(chunk)
                return b"".join(parts)
            except Exception as e:
                raise fail("%s could not be read (%s)" % (path, e))

        # WHEEL
        wheel_meta = email.parser.HeaderParser().parsestr(read(di + "/WHEEL").decode("utf-8", "replace"))
        if not (wheel_meta.get("Wheel-Version", "").strip().split(".")[0] == "1"):
            raise fail("Wheel-Version %r is not 1.x" % wheel_meta.get("Wheel-Version"))
        if wheel_meta.get("Root-Is-Purelib", "").strip().lower() != "true":
            raise fail("Root-Is-Purelib is not true: not a pure-Python wheel")
        for tag in wheel_meta.get_all("Tag") or []:
            parts = tag.strip().split("-")
            if len(parts) != 3 or not (parts[0].startswith("py") or parts[0] == "cp314") or parts[1:] != ["none", "any"]:
                raise fail("WHEEL has the tag %r: not a pure-Python wheel (py*-none-any or cp314-none-any)" % tag.strip()[:100])
        # METADATA
        meta = email.parser.HeaderParser().parsestr(read(di + "/METADATA").decode("utf-8", "replace"))
        if normalize(meta.get("Name", "").strip()) != name:
            raise fail("METADATA names the project %r, not %r" % (meta.get("Name"), name))
        if _canonical_version(meta.get("Version", "").strip()) != _canonical_version(version):
            raise fail("METADATA says version %r, its file name %s" % ((meta.get("Version") or "")[:50], version))
        self.requires_python = (meta.get("Requires-Python") or "").strip()
        self.requires = meta.get_all("Requires-Dist") or []
        # RECORD: every file listed, every listed file's hash and size right.
        record_path = di + "/RECORD"
        try:
            rows = list(csv.reader(io.StringIO(read(record_path).decode("utf-8"))))
        except (UnicodeDecodeError, csv.Error) as e:
            raise fail("RECORD is unreadable (%s)" % e)
        listed = {}
        for row in rows:
            if not row or not row[0]:
                continue
            if len(row) != 3:
                raise fail("RECORD line %r is not path,hash,size" % ",".join(row)[:200])
            listed[row[0]] = row
        for path, info in members.items():
            row = listed.get(path)
            if row is None:
                raise fail("%s is not listed in RECORD" % path[:200])
            # RECORD and its signatures (RECORD.jws, RECORD.p7s) list no hash of their own.
            if path in (record_path, di + "/RECORD.jws", di + "/RECORD.p7s"):
                continue
            if not row[1].startswith("sha256="):
                raise fail("RECORD gives %s no sha256 hash" % path[:200])
            if verify:
                content = self.contents[path] = read(path)
                if _record_digest(content) != row[1]:
                    raise fail("%s does not match its RECORD hash (a changed or corrupted file)" % path[:200])
                if row[2] and row[2] != str(len(content)):
                    raise fail("%s is %d bytes, RECORD says %s" % (path[:200], len(content), row[2][:30]))
        for path in listed:
            if path not in members:
                raise fail("RECORD lists %s, which is not in the wheel" % path[:200])
        # Where each file goes, relative to site-packages.
        data_dir = di[: -len(".dist-info")] + ".data/"
        self.targets = []
        for path in members:
            if path.startswith(data_dir):
                kind, _, rest = path[len(data_dir):].partition("/")
                if kind in ("purelib", "platlib") and rest:
                    top = rest.split("/", 1)[0]
                    if _is_metadata(top) and top != di:
                        # importlib.metadata would list a project that is not there.
                        raise fail("%s would install another .dist-info or .egg-info (%s)" % (path[:200], top[:100]))
                    self.targets.append((path, rest))
                # scripts, headers, data: nowhere to go in a den
            else:
                self.targets.append((path, path))
        self.zf, self.read = zf, read


def _check_needs(wheels, env):
    by_name = {w.name: w for w in wheels}
    for w in wheels:
        try:
            _check_wheel_needs(w, by_name, env)
        except WheelError:
            raise
        except Exception as e:  # a check that failed in a way it did not foresee: still a refusal, of this wheel
            raise WheelError(w.name, "%s: its requirements could not be checked (%s: %s)" % (w.file, type(e).__name__, str(e)[:200]))


def _check_wheel_needs(w, by_name, env):
    here = env["python_full_version"]
    if w.requires_python:
        try:
            ok = version_ok(here, w.requires_python)
        except ValueError as e:
            raise WheelError(w.name, "%s: Requires-Python %r: %s" % (w.file, w.requires_python, e))
        if not ok:
            raise WheelError(w.name, "%s needs Python %s; the den runs %s" % (w.file, w.requires_python, here))
    for line in w.requires:
        try:
            dep, spec, marker = parse_requirement(line)
            if marker is not None and not marker_holds(marker, env):
                continue
        except RecursionError:
            raise WheelError(w.name, "%s: Requires-Dist %r: its marker is nested too deeply" % (w.file, line[:200]))
        except ValueError as e:
            raise WheelError(w.name, "%s: Requires-Dist %r: %s" % (w.file, line[:200], e))
        if spec.startswith("@"):
            # Only when its marker holds: what an extra or another platform needs is never fetched.
            raise WheelError(w.name, "%s: Requires-Dist %r names a direct URL; foxden installs only the given wheels" % (w.file, line[:200]))
        have = by_name.get(dep)
        if have is None:
            raise WheelError(w.name, "%s requires %s%s, which is not among the given wheels (%s): add its wheel" % (
                w.file, dep, spec[:200], ", ".join(sorted(by_name)) or "none"))
        try:
            fits = not spec or version_ok(have.version, spec)
        except ValueError as e:
            raise WheelError(w.name, "%s: Requires-Dist %r: %s" % (w.file, line[:200], e))
        if not fits:
            if version_key(have.version) is None:
                raise WheelError(have.name, "%s: its version %r is not a PEP 440 version, so %s's requirement %s%s cannot be checked" % (have.file, have.version, w.name, dep, spec[:200]))
            raise WheelError(w.name, "%s requires %s%s, but %s %s was given" % (w.file, dep, spec[:200], dep, have.version))


def install(wheels, site, env=None, verify=True, written_out=None):
    """Checks every (file name, bytes) wheel, then installs them all into `site`. Raises
    WheelError naming the package; nothing is written unless everything checked out.
    verify=False skips re-hashing each file (for a set this interpreter's den page already had
    checked in full by an earlier worker)."""
    env = dict(env or default_environment())
    checked = []
    seen = {}
    budget = MAX_UNPACKED_BYTES
    for file, data in wheels:
        try:
            w = _Wheel(file, data, verify, budget)
        except WheelError:
            raise
        except Exception as e:  # a check that failed in a way it did not foresee: still a refusal
            raise WheelError(_project_of(file), "%s could not be checked (%s: %s)" % (file, type(e).__name__, str(e)[:200]))
        if w.name in seen:
            raise WheelError(w.name, "given twice (%s and %s)" % (seen[w.name], file))
        seen[w.name] = file
        budget -= w.unpacked
        checked.append(w)
    try:
        _check_needs(checked, env)
    except WheelError:
        raise
    except Exception as e:
        raise WheelError(checked[0].name if checked else "", "the wheels' requirements could not be checked (%s: %s)" % (type(e).__name__, str(e)[:200]))
    owner = {}
    # Folders looked up once each: in Pyodide a failed lookup raises inside the JS file system,
    # which costs far more than a dict lookup (thousands of files, a few folders).
    dir_state = {}

    def dir_exists(d):
        # A folder exists if its parent does and it is one; walked up to site (or to a folder
        # already known) in a loop, then down: member paths may be thousands of folders deep.
        chain = []
        while d not in dir_state:
            parent = os.path.dirname(d)
            if len(parent) < len(site) or parent == d:
                dir_state[d] = os.path.isdir(d)
                break
            chain.append(d)
            d = parent
        known = dir_state[d]
        for c in reversed(chain):
            known = known and os.path.isdir(c)
            dir_state[c] = known
        return known

    for w in checked:
        for _, target in w.targets:
            if target in owner:
                raise WheelError(w.name, "%s and %s both write %s" % (owner[target], w.file, target))
            owner[target] = w.file
            dest = os.path.join(site, target)
            if dir_exists(os.path.dirname(dest)) and os.path.lexists(dest):
                raise WheelError(w.name, "%s would overwrite %s, which is already installed" % (w.file, target))
    written = []
    made = []
    try:
        for w in checked:
            for src, target in w.targets:
                dest = os.path.join(site, target)
                folder = os.path.dirname(dest)
                missing = []
                while folder and not os.path.isdir(folder):
                    missing.append(folder)
                    folder = os.path.dirname(folder)
                for d in reversed(missing):
                    os.mkdir(d)
                    made.append(d)
                with open(dest, "wb") as f:
                    written.append(dest)
                    data = w.contents.pop(src, None)
                    f.write(w.read(src) if data is None else data)
            with open(os.path.join(site, w.dist_info, "INSTALLER"), "w") as f:
                written.append(f.name)
                f.write("foxden\n")
    except WheelError:
        _undo(written, made)
        raise
    except Exception as e:
        _undo(written, made)
        raise WheelError(w.name, "%s could not be installed (%s); nothing was installed" % (w.file, e))
    import importlib
    importlib.invalidate_caches()
    if written_out is not None:
        written_out.extend(written)
    return [[w.name, w.version] for w in checked]


def _undo(written, made):
    for p in reversed(written):
        try:
            os.unlink(p)
        except OSError:
            pass
    for d in reversed(made):
        try:
            os.rmdir(d)
        except OSError:
            pass


def _foxden_install(items, verify):
    """Called by worker.js with a JS array of {file, data: Uint8Array}: [None, [paths written]],
    or [package, message]."""
    import sysconfig
    written = []
    # What a MemoryError names: the wheel whose bytes were being copied (install names the wheel
    # it is checking or writing itself).
    file = ""
    try:
        # Inside the try: a MemoryError copying the bytes is a refusal of the wheels too.
        wheels = []
        for it in items:
            file = str(it.file)
            wheels.append((file, it.data.to_bytes()))
        install(wheels, sysconfig.get_path("purelib"), verify=bool(verify), written_out=written)
        return [None, written]
    except WheelError as e:
        return [e.package, e.message]
    except MemoryError:
        return [_project_of(file) if file else "", "the wheels do not fit in the worker's memory (maxMemoryBytes)"]
