"""Deterministic workloads: a tree shaped like a code repository, a few big files, and the
edits made between saves.

Everything is derived from one seed through `random.Random` and SHAKE-256, so the same seed
gives the same bytes, names, modes and mtimes on any machine. Generation is built for speed:
file contents are slices of one pre-generated pool of source-like text (so 300 MB costs a
few seconds, not minutes), and incompressible data comes from SHAKE-256 in 16 MiB blocks.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import os
import random
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

MiB = 1 << 20

# Fixed mtimes make the tree identical between runs (and archives of it reproducible).
BASE_MTIME = 1_700_000_000

TOP_DIRS = ["src", "crates", "tests", "docs", "web", "tools", "scripts", "examples", "vendor", "assets"]
EXTENSIONS = [
    (".rs", 20), (".py", 14), (".ts", 12), (".js", 8), (".go", 6), (".c", 5), (".h", 5),
    (".md", 8), (".json", 6), (".toml", 3), (".yaml", 4), (".txt", 3), (".html", 2),
    (".css", 2), (".sh", 2),
]
EXECUTABLE = {".sh"}
KEYWORDS = ["fn", "let", "mut", "pub", "impl", "struct", "enum", "match", "return", "if", "else",
            "for", "while", "def", "class", "import", "from", "const", "var", "async", "await",
            "static", "void", "int", "self", "type", "use", "mod", "where", "yield"]
SYLLABLES = ["ba", "ce", "di", "fo", "gu", "ha", "je", "ki", "lo", "mu", "na", "pe", "qui", "ro",
             "sa", "te", "vu", "wa", "xe", "yo", "zi", "tr", "st", "an", "or", "en", "il", "um"]


@dataclass(frozen=True)
class TreeSpec:
    """Shape of the generated source tree."""

    files: int
    dirs: int
    total_bytes: int
    binary_share: float = 0.15  # of total_bytes, in a few incompressible files
    git_share: float = 0.25     # of the files, committed into the tree's own .git

    @property
    def binaries(self) -> int:
        return max(2, self.files // 6000) if self.binary_share > 0 else 0


@dataclass(frozen=True)
class BigSpec:
    """The big-files workload: one file that gets edited, and others beside it."""

    edited_bytes: int
    other_bytes: list[int]
    edit_bytes: int = 1_000_000


@dataclass
class FileEntry:
    rel: str
    size: int
    binary: bool


@dataclass
class Tree:
    """A generated tree and what is known about it without walking it again."""

    root: Path
    files: list[FileEntry] = field(default_factory=list)
    dirs: int = 0
    symlinks: int = 0
    git_files: int = 0  # files inside the tree's .git

    @property
    def bytes(self) -> int:
        return sum(f.size for f in self.files)


def _stream(seed: int, label: str, size: int) -> bytes:
    """`size` incompressible bytes, fixed by (seed, label)."""
    return hashlib.shake_256(f"{seed}:{label}".encode()).digest(size)


def write_random_file(path: Path, seed: int, label: str, size: int, block: int = 16 * MiB) -> None:
    with open(path, "wb") as f:
        index = 0
        left = size
        while left > 0:
            n = min(block, left)
            f.write(_stream(seed, f"{label}:{index}", n))
            left -= n
            index += 1


class TextPool:
    """Source-like lines, generated once; files are made of slices of it."""

    def __init__(self, rng: random.Random, size: int):
        vocabulary = sorted({"".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))
                             for _ in range(3000)})
        rng.shuffle(vocabulary)
        # Identifiers follow a Zipf law, as they do in real code: a few are everywhere.
        weights = list(itertools.accumulate(1.0 / (rank + 1) for rank in range(len(vocabulary))))
        types = [w.capitalize() for w in vocabulary[:200]]

        def words(k: int) -> list[str]:
            return rng.choices(vocabulary, cum_weights=weights, k=k)

        lines: list[str] = []
        length = 0
        depth = 0
        while length < size:
            kind = rng.random()
            pad = "    " * depth
            a, b, c, d = words(4)
            if kind < 0.10:
                line = ""
            elif kind < 0.20:
                line = f"{pad}// {' '.join(words(rng.randint(3, 11)))}"
            elif kind < 0.30 and depth < 5:
                line = f"{pad}{rng.choice(KEYWORDS)} {a}_{b}({c}: {rng.choice(types)}) {{"
                depth += 1
            elif kind < 0.42 and depth > 0:
                depth -= 1
                line = "    " * depth + "}"
            elif kind < 0.70:
                line = f"{pad}let {a} = {b}.{c}({rng.randint(0, 64)}, \"{d}\");"
            else:
                op = rng.choice(["=", "==", "+=", "->", "=>", "<"])
                line = f"{pad}{rng.choice(KEYWORDS)} {a} {op} {rng.choice(types)}::{b}({c});"
            lines.append(line)
            length += len(line) + 1
        self.data = ("\n".join(lines) + "\n").encode()

    def take(self, rng: random.Random, size: int) -> bytes:
        """About `size` bytes of whole lines: a few runs from random places in the pool."""
        parts = []
        got = 0
        data = self.data
        while got < size:
            start = data.find(b"\n", rng.randrange(len(data) - 4096)) + 1
            run = min(size - got, rng.randint(600, 4000))
            end = data.find(b"\n", start + run)
            end = start + run if end < 0 else end + 1
            parts.append(data[start:end])
            got += end - start
        return b"".join(parts)[:size]

    def region(self, rng: random.Random, size: int) -> bytes:
        """Exactly `size` bytes of text, not aligned to lines."""
        start = rng.randrange(len(self.data) - size)
        return self.data[start:start + size]


def _dir_tree(rng: random.Random, count: int, words: list[str]) -> list[str]:
    """`count` directory paths (relative, sorted parents first) shaped like a repository."""
    dirs = list(TOP_DIRS[:max(1, min(len(TOP_DIRS), count))])
    depth = {d: 1 for d in dirs}
    children: dict[str, set[str]] = {d: set() for d in dirs}
    while len(dirs) < count:
        parent = rng.choice(dirs)
        if depth[parent] >= 7:
            continue
        name = rng.choice(words)
        if name in children[parent]:
            continue
        children[parent].add(name)
        path = f"{parent}/{name}"
        dirs.append(path)
        depth[path] = depth[parent] + 1
        children[path] = set()
    return dirs


def _text_sizes(rng: random.Random, count: int, total: int) -> list[int]:
    """Log-normal sizes (median ~3 KB, most 1-20 KB, a tail to 2 MB) scaled to `total`."""
    raw = [min(2 * MiB, max(120, int(rng.lognormvariate(math.log(3100), 1.0)))) for _ in range(count)]
    scale = total / sum(raw)
    return [max(64, min(2 * MiB, int(s * scale))) for s in raw]


def generate_tree(root: Path, spec: TreeSpec, seed: int, pool: TextPool) -> Tree:
    """Write the source tree under `root` (which must not exist) and give its inventory."""
    rng = random.Random(f"tree:{seed}")
    words = sorted({"".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3))) for _ in range(4000)})
    dirs = _dir_tree(rng, spec.dirs, words)
    root.mkdir(parents=True)
    for d in dirs:
        (root / d).mkdir(parents=True, exist_ok=True)
    tree = Tree(root=root, dirs=len(dirs))

    binary_total = int(spec.total_bytes * spec.binary_share)
    text_count = spec.files - spec.binaries
    text_sizes = _text_sizes(rng, text_count, spec.total_bytes - binary_total)
    # Every directory gets a file; the rest go where files already crowd (a few big modules).
    weights = [rng.paretovariate(1.1) for _ in dirs]
    homes = (list(dirs) + rng.choices(dirs, weights=weights, k=max(0, text_count - len(dirs))))[:text_count]
    exts = [e for e, _ in EXTENSIONS]
    ext_weights = [w for _, w in EXTENSIONS]
    taken: set[str] = set()
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC

    def unique(directory: str, stem: str, ext: str) -> str:
        rel = f"{directory}/{stem}{ext}"
        n = 1
        while rel in taken:
            n += 1
            rel = f"{directory}/{stem}_{n}{ext}"
        taken.add(rel)
        return rel

    for i, (home, size) in enumerate(zip(homes, text_sizes)):
        ext = rng.choices(exts, weights=ext_weights)[0]
        rel = unique(home, rng.choice(words), ext)
        header = f"// {rel} ({seed}:{i})\n".encode()
        body = header + pool.take(rng, max(0, size - len(header)))
        mode = 0o755 if ext in EXECUTABLE else 0o644
        fd = os.open(root / rel, flags, mode)
        os.write(fd, body)
        os.close(fd)
        tree.files.append(FileEntry(rel, len(body), False))

    per_binary = binary_total // max(1, spec.binaries)
    for i in range(spec.binaries):
        size = int(per_binary * rng.uniform(0.7, 1.3))
        home = rng.choice([d for d in dirs if d.startswith("assets")] or dirs)
        rel = unique(home, rng.choice(words), rng.choice([".bin", ".png", ".woff2", ".so"]))
        write_random_file(root / rel, seed, rel, size)
        tree.files.append(FileEntry(rel, size, True))

    # A few relative symlinks to neighbours, as repositories have.
    for i in range(max(2, spec.files // 2500)):
        target = rng.choice(tree.files)
        directory, name = target.rel.rsplit("/", 1)
        link = unique(directory, f"link_{i}", "")
        os.symlink(name, root / link)
        tree.symlinks += 1

    for i, entry in enumerate(tree.files):
        os.utime(root / entry.rel, (BASE_MTIME + i, BASE_MTIME + i))
    tree.files.sort(key=lambda f: f.rel)
    return tree


def generate_monorepo(root: Path, files: int, bytes_per_file: int, per_package: int, seed: int,
                      pool: TextPool) -> Tree:
    """A tree of `files` files made of packages of `per_package` files each, every package a
    source tree of its own seed (`pkg000/`, `pkg001/`, ...). The source tree puts a growing share
    of its files in a few crowded directories (a Pareto law: one holds 18,000 of 50,000 files,
    93,000 of 200,000), so scaled up as one tree it would measure one ever larger directory;
    a large repository grows by more packages instead, which is what this measures."""
    root.mkdir(parents=True)
    tree = Tree(root=root)
    for i in range(max(1, -(-files // per_package))):
        count = min(per_package, files - i * per_package)
        spec = TreeSpec(files=count, dirs=max(10, count // 50), total_bytes=count * bytes_per_file, git_share=0.0)
        name = f"pkg{i:03d}"
        part = generate_tree(root / name, spec, seed * 1000 + i, pool)
        tree.files.extend(FileEntry(f"{name}/{f.rel}", f.size, f.binary) for f in part.files)
        tree.dirs += part.dirs + 1
        tree.symlinks += part.symlinks
    tree.files.sort(key=lambda f: f.rel)
    return tree


def git_env(home: Path) -> dict[str, str]:
    """A git environment that reads no user or system configuration."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "bench@example.invalid",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    }


def add_git_history(tree: Tree, spec: TreeSpec, seed: int, home: Path) -> None:
    """Give the tree a real `.git`: two commits of part of it, written as a pack by
    `git fast-import` (much faster than `git add` and `git repack`), then a few loose objects
    from a last small commit made the ordinary way."""
    rng = random.Random(f"git:{seed}")
    env = git_env(home) | {"GIT_AUTHOR_DATE": f"{BASE_MTIME} +0000",
                           "GIT_COMMITTER_DATE": f"{BASE_MTIME} +0000"}
    text = [f.rel for f in tree.files if not f.binary]
    first = sorted(rng.sample(text, int(len(text) * spec.git_share)))
    rest = sorted(set(text) - set(first))
    last = sorted(rng.sample(rest, max(1, len(text) // 500)))

    def git(*args: str, stdin: bytes | None = None) -> None:
        subprocess.run(["git", *args], cwd=tree.root, env=env, input=stdin, check=True,
                       capture_output=True)

    stream = bytearray()
    half = len(first) // 2
    for number, paths in enumerate([first[:half], first[half:]], start=1):
        message = f"Import modules, part {number}\n".encode()
        stream += (f"commit refs/heads/main\nmark :{number}\n"
                   f"author bench <bench@example.invalid> {BASE_MTIME + number} +0000\n"
                   f"committer bench <bench@example.invalid> {BASE_MTIME + number} +0000\n"
                   f"data {len(message)}\n").encode() + message
        if number > 1:
            stream += f"from :{number - 1}\n".encode()
        for rel in paths:
            data = (tree.root / rel).read_bytes()
            mode = "100755" if os.stat(tree.root / rel).st_mode & 0o100 else "100644"
            stream += f"M {mode} inline {rel}\ndata {len(data)}\n".encode() + data + b"\n"
        stream += b"\n"
    git("init", "-q", "-b", "main")
    git("fast-import", "--quiet", stdin=bytes(stream))
    git("reset", "-q", "main")  # index from the imported commit; the work tree is not touched
    git("add", "--pathspec-from-file=-", stdin=("\n".join(last) + "\n").encode())
    git("commit", "-q", "-m", "Add more modules")
    tree.git_files = sum(len(names) for _, _, names in os.walk(tree.root / ".git"))


def generate_big(root: Path, spec: BigSpec, seed: int) -> list[FileEntry]:
    """A few big incompressible files (think model weights, disk images, media)."""
    root.mkdir(parents=True)
    entries = []
    sizes = [spec.edited_bytes, *spec.other_bytes]
    for i, size in enumerate(sizes):
        rel = f"{'edited' if i == 0 else 'blob' + str(i)}.bin"
        write_random_file(root / rel, seed, f"big:{rel}", size)
        os.utime(root / rel, (BASE_MTIME, BASE_MTIME))
        entries.append(FileEntry(rel, size, True))
    return entries


def edit_big(root: Path, spec: BigSpec, seed: int, step: int) -> int:
    """Overwrite `edit_bytes` in the middle of the edited file (a fresh spot each step)."""
    offset = spec.edited_bytes // 2 + step * 3 * spec.edit_bytes
    offset = min(offset, spec.edited_bytes - spec.edit_bytes)
    fd = os.open(root / "edited.bin", os.O_WRONLY)
    try:
        os.pwrite(fd, _stream(seed, f"edit:{step}", spec.edit_bytes), offset)
    finally:
        os.close(fd)
    return spec.edit_bytes


@dataclass
class Edit:
    """Bytes to write over part of one file."""

    entry: FileEntry
    offset: int
    data: bytes


@dataclass
class Change:
    """A round of edits: which files, how many bytes rewritten, and the files' sizes."""

    edits: list[Edit]

    @property
    def files(self) -> list[str]:
        return [e.entry.rel for e in self.edits]

    @property
    def region_bytes(self) -> int:
        return sum(len(e.data) for e in self.edits)

    @property
    def file_bytes(self) -> int:
        return sum(e.entry.size for e in self.edits)


def plan_change(tree: Tree, pool: TextPool, seed: int, label: str, count: int) -> Change:
    """Edits to a region of each of `count` files, chosen by (seed, label).

    Sizes do not change; text files get other text, binaries other random bytes. The same
    (seed, label) always gives the same files and bytes, so a change can be replayed exactly
    for each tool in turn."""
    rng = random.Random(f"change:{seed}:{label}")
    edits = []
    for n, entry in enumerate(rng.sample(tree.files, min(count, len(tree.files)))):
        length = min(entry.size, rng.randint(256, 4096))
        offset = rng.randrange(entry.size - length + 1)
        if entry.binary:
            data = _stream(seed, f"change:{label}:{n}", length)
        else:
            data = pool.region(rng, length)
        edits.append(Edit(entry, offset, data))
    return Change(edits)


def apply_change(tree: Tree, change: Change) -> None:
    for edit in change.edits:
        fd = os.open(tree.root / edit.entry.rel, os.O_WRONLY)
        try:
            os.pwrite(fd, edit.data, edit.offset)
        finally:
            os.close(fd)


def change_files(tree: Tree, pool: TextPool, seed: int, label: str, count: int) -> Change:
    change = plan_change(tree, pool, seed, label, count)
    apply_change(tree, change)
    return change


def generate_small_tree(root: Path, seed: int, pool: TextPool, files: int) -> Tree:
    """A small tree for the many-snapshots workload."""
    return generate_tree(root, TreeSpec(files=files, dirs=max(4, files // 50), total_bytes=files * 4000,
                                        binary_share=0.0, git_share=0.0), seed, pool)
