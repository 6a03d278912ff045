"""Compose: how long the services of a running Docker Compose project are down while a
savepoint is taken, for a 1 GB volume of which 1 MB changed since the last one.

cairn (`cairn compose save`) stops the services, reads only the files whose stat changed and
starts them again; the peer is what an arcave-style tool does: stop the containers, tar every
volume, start them. Stopping and starting with nothing in between is the floor any savepoint
that stops the services pays: the engine's own work. Downtime is read from the engine, the
same way for every tool: for each container, from `State.FinishedAt` of the stop to the
`State.StartedAt` that follows.

The project (one busybox service, one named volume) is created for the run and removed with
its volume at the end, also when something fails. It needs a Docker engine, a compose command
and the `cairn-test/busybox:1` image, which is built here when missing, as
scripts/deps/docker-images.sh builds it.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import subprocess
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from cairn import Cairn
from common import Context, VolumeSpec, rounds
from measure import Cmd, Measurement, Outcome, SetupError, remove_tree
from peers import Tool
from report import seconds, size
from scratchfs import syncfs
from workload import BASE_MTIME, write_random_file

PROJECT = "cairnbench"
SERVICE = "app"
VOLUME = f"{PROJECT}_data"  # compose's name for the project's volume `data`
IMAGE = "cairn-test/busybox:1"
IMAGE_DIR = Path(__file__).resolve().parent.parent / "tests" / "images" / "busybox"
PEER = "stop + tar + start"
FLOOR = "stop + start"

# sh as PID 1 ignores SIGTERM unless it traps it; without the trap `docker stop` waits its
# 10 s and kills, and both tools would pay those 10 s, hiding the difference. The trap (not
# compose's `init: true`) works on engines that ship no docker-init.
COMPOSE_FILE = f"""\
services:
  {SERVICE}:
    image: {IMAGE}
    command: ["sh", "-c", "trap 'exit 0' TERM; sleep 1000000 & wait"]
    volumes:
      - data:/data
volumes:
  data: {{}}
"""

# Where the volume's files go: a few large files (think database tables) and many around 1 MB
# (think uploads or segments), in a few directories.
LARGE_SHARES = [0.12, 0.06, 0.02]  # of the volume's bytes, one file each
SMALL_DIRS = ["db/base", "db/wal", "uploads/2023", "uploads/2024", "cache"]
CHANGED_FILES = 4  # the change is split over this many of the small files


# ---------------------------------------------------------------------------------- workload

@dataclass
class VolumeFile:
    rel: str
    size: int


def fill_volume(root: Path, spec: VolumeSpec, seed: int) -> list[VolumeFile]:
    """Write `spec.total_bytes` of incompressible data in `spec.files` files under `root`."""
    rng = random.Random(f"volume:{seed}")
    large = [int(spec.total_bytes * share) for share in LARGE_SHARES]
    count = spec.files - len(large)
    # Log-normal around the mean that fills the rest, so most are within 2× of it.
    raw = [rng.lognormvariate(0.0, 0.5) for _ in range(count)]
    scale = (spec.total_bytes - sum(large)) / sum(raw)
    files = [VolumeFile(f"db/base/table{i}.dat", n) for i, n in enumerate(large)]
    files += [VolumeFile(f"{rng.choice(SMALL_DIRS)}/seg{i:05d}.dat", max(4096, int(r * scale)))
              for i, r in enumerate(raw)]
    for f in files:
        path = root / f.rel
        path.parent.mkdir(parents=True, exist_ok=True)
        write_random_file(path, seed, f"volume:{f.rel}", f.size)
        os.utime(path, (BASE_MTIME, BASE_MTIME))
    return files


def change_volume(root: Path, files: list[VolumeFile], spec: VolumeSpec, seed: int, run: int) -> int:
    """Rewrite `spec.change_bytes` in place, split over a few of the files around 1 MB (chosen by
    seed and run), as a service writing into its volume would. Returns the changed files'
    total size: what a file-level engine has to read again."""
    rng = random.Random(f"volume-change:{seed}:{run}")
    region = spec.change_bytes // CHANGED_FILES
    candidates = [f for f in files if region <= f.size <= 4 * region * CHANGED_FILES]
    chosen = rng.sample(candidates, CHANGED_FILES)
    for n, f in enumerate(chosen):
        fd = os.open(root / f.rel, os.O_WRONLY)
        try:
            data = hashlib.shake_256(f"{seed}:volume-change:{run}:{n}".encode()).digest(region)
            os.pwrite(fd, data, rng.randrange(f.size - region + 1))
        finally:
            os.close(fd)
    return sum(f.size for f in chosen)


# ---------------------------------------------------------------------------------- engine

def engine_ns(stamp: str) -> int:
    """An engine timestamp (RFC 3339, UTC, nanoseconds) as nanoseconds since the epoch;
    datetime keeps only microseconds."""
    whole, _, fraction = stamp.rstrip("Z").partition(".")
    t = datetime.strptime(whole, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc)
    return int(t.timestamp()) * 10**9 + int((fraction + "000000000")[:9])


@dataclass
class State:
    running: bool
    started_ns: int
    finished_ns: int


class ComposeProject:
    """The benchmark's project, driven with whichever compose command the machine has."""

    def __init__(self, ctx: Context, env: dict[str, str], compose: list[str], directory: Path):
        self.ctx = ctx
        self.env = env
        self.directory = directory
        self.file = directory / "compose.yaml"
        self.compose = [*compose, "-p", PROJECT, "-f", str(self.file)]

    def _check(self, argv: list[str], what: str) -> str:
        return self.ctx.runner.check(Cmd(argv, self.env, self.directory), what).stdout

    def up(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        self.file.write_text(COMPOSE_FILE)
        self.down()  # a project left by an interrupted run
        self._check([*self.compose, "up", "-d"], "compose up")

    def down(self) -> None:
        """Remove the containers and the volume (not checked: there may be nothing to remove)."""
        if self.file.exists():
            self.ctx.runner.run(Cmd([*self.compose, "down", "-v", "-t", "10"], self.env, self.directory))

    def containers(self) -> list[str]:
        out = self._check(["docker", "ps", "-aq", "--no-trunc", "--filter",
                           f"label=com.docker.compose.project={PROJECT}"], "docker ps")
        ids = out.split()
        if not ids:
            raise SetupError(f"compose project {PROJECT} has no containers")
        return ids

    def volume_path(self) -> Path:
        return Path(self._check(["docker", "volume", "inspect", "-f", "{{.Mountpoint}}", VOLUME],
                                "docker volume inspect").strip())

    def states(self) -> dict[str, State]:
        out = self._check(["docker", "inspect", "-f",
                           "{{.Id}} {{.State.Running}} {{.State.StartedAt}} {{.State.FinishedAt}}",
                           *self.containers()], "docker inspect")
        states = {}
        for line in out.splitlines():
            cid, running, started, finished = line.split()
            states[cid] = State(running == "true", engine_ns(started), engine_ns(finished))
        return states


def downtime(before: dict[str, State], after: dict[str, State]) -> float:
    """The longest any container was down between two inspections, in seconds; each must
    have been stopped and started again in between, and be running now."""
    longest = 0.0
    for cid, now in after.items():
        was = before.get(cid)
        if was is None:
            raise SetupError(f"container {cid[:12]} appeared during the savepoint")
        if not now.running:
            raise SetupError(f"container {cid[:12]} is not running after the savepoint")
        if not (was.started_ns < now.finished_ns <= now.started_ns):
            raise SetupError(f"container {cid[:12]} was not stopped and started again")
        longest = max(longest, (now.started_ns - now.finished_ns) / 1e9)
    return longest


def apt_install(ctx: Context, package: str) -> None:
    """Install a Debian package, as peers.ensure_installed does for the peers."""
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise SetupError(f"{package} is not installed (install it, or run as root where apt-get exists)")
    ctx.log(f"compose: installing {package} with apt-get")
    env = os.environ | {"DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-q", "--no-install-recommends", package]
    if subprocess.run(install, env=env, capture_output=True).returncode != 0:
        subprocess.run(["apt-get", "update", "-q"], env=env, capture_output=True)
        if subprocess.run(install, env=env, capture_output=True).returncode != 0:
            raise SetupError(f"apt-get could not install {package}")


def prepare_engine(ctx: Context, env: dict[str, str]) -> list[str]:
    """Check the engine answers, make sure the image exists; returns the compose command."""
    version = Cmd(["docker", "version", "-f", "{{.Server.Version}}"], env)
    outcome = ctx.runner.run(version)
    if not outcome.ok:
        raise SetupError(f"no Docker engine answers: {outcome.error_text(version)}")
    if ctx.runner.run(Cmd(["docker", "compose", "version"], env)).ok:
        compose = ["docker", "compose"]
    else:
        if shutil.which("docker-compose") is None:
            apt_install(ctx, "docker-compose")
        compose = ["docker-compose"]
    if not ctx.runner.run(Cmd(["docker", "image", "inspect", IMAGE], env)).ok:
        # The image is FROM scratch, so the busybox in it must be the statically linked one.
        static = subprocess.run(["dpkg", "-s", "busybox-static"], capture_output=True).returncode == 0
        if not (static and Path("/bin/busybox").exists()):
            apt_install(ctx, "busybox-static")
        ctx.log(f"compose: building {IMAGE}")
        context = ctx.scratch("busybox-image")
        remove_tree(context)
        context.mkdir()
        shutil.copy(IMAGE_DIR / "Dockerfile", context / "Dockerfile")
        shutil.copy("/bin/busybox", context / "busybox")
        ctx.runner.check(Cmd(["docker", "build", "-q", "-t", IMAGE, str(context)], env), f"building {IMAGE}")
        remove_tree(context)
    return compose


# ---------------------------------------------------------------------------------- tools

class ComposeCairn(Cairn):
    """cairn saving the project: `cairn compose save PROJECT --json`."""

    def save(self, session: str | None = None) -> Cmd:
        return self._cmd("compose", "save", PROJECT, "--json")


class StopTarStart(Tool):
    """Stop the containers, `tar | zstd -1 -T0` the volume, start them: the least an
    arcave-style full copy can do (`docker stop`/`start` by id, not the slower compose CLI).
    The archive is overwritten each time; the services are started again even if tar fails."""

    name = PEER

    def __init__(self, project: ComposeProject, volume: Path, store: Path, env: dict[str, str]):
        super().__init__(volume, store, env)
        self.project = project

    def fresh_store(self, runner) -> None:
        super().fresh_store(runner)
        self.store.mkdir(parents=True)

    @property
    def archive(self) -> Path:
        return self.store / f"{VOLUME}.tar.zst"

    def save(self) -> Cmd:
        ids = " ".join(self.project.containers())
        return Cmd(f"docker stop {ids} > /dev/null && "
                   f"tar -C '{self.tree}' -cf - . | zstd -1 -T0 -q -f -o '{self.archive}'; saved=$?; "
                   f"docker start {ids} > /dev/null || exit; exit $saved", self.env)

    def store_size(self) -> int:
        return self.archive.stat().st_size if self.archive.exists() else 0


class StopStart(Tool):
    """`docker stop` then `docker start`: the engine's own share of any downtime."""

    name = FLOOR

    def __init__(self, project: ComposeProject, store: Path, env: dict[str, str]):
        super().__init__(project.directory, store, env)  # the store stays empty
        self.project = project

    def save(self) -> Cmd:
        ids = " ".join(self.project.containers())
        return Cmd(f"docker stop {ids} > /dev/null && docker start {ids} > /dev/null", self.env)


# ---------------------------------------------------------------------------------- suite

def median(values: list[int]) -> int:
    return sorted(values)[len(values) // 2]


def run(ctx: Context) -> None:
    spec = ctx.scale.volume
    section = ctx.results.section(
        f"Compose: savepoint of a running project with a {size(spec.total_bytes)} volume",
        f"One service (busybox) with a named volume of {size(spec.total_bytes)} in {spec.files:,} "
        f"incompressible files ({len(LARGE_SHARES)} large ones, the rest around "
        f"{size(spec.total_bytes * (1 - sum(LARGE_SHARES)) / (spec.files - len(LARGE_SHARES)))}). "
        f"While the service runs, {size(spec.change_bytes)} is rewritten before each savepoint "
        f"({size(spec.change_bytes // CHANGED_FILES)} in each of {CHANGED_FILES} files). "
        f"**Downtime** is read from the engine after the command, the same way for every tool: "
        f"from the container's `State.FinishedAt` (its stop) to the next `State.StartedAt`. The "
        f"whole command's time, peak RSS and bytes stored are reported beside it. cairn runs "
        f"`cairn compose save PROJECT --json`; the peer runs `docker stop`, `tar -C VOLUME -cf - . "
        f"| zstd -1 -T0`, `docker start`; `{FLOOR}` (`docker stop`, then `docker start`, nothing "
        f"copied) is the engine's own share, the floor for any savepoint that stops the services. "
        f"\"stored\" is the growth of cairn's store for one savepoint, and the size of the peer's "
        f"archive.")
    # The docker CLI, compose and cairn find a non-default engine through DOCKER_HOST.
    env = ctx.env | ({"DOCKER_HOST": os.environ["DOCKER_HOST"]} if "DOCKER_HOST" in os.environ else {})
    facts = ctx.results.facts["compose"] = {
        "volume_bytes": spec.total_bytes, "files": spec.files, "change_bytes": spec.change_bytes}
    first = {"cairn": Measurement()}
    down = {"cairn": Measurement(), PEER: Measurement(), FLOOR: Measurement()}
    saves = {"cairn": Measurement(), PEER: Measurement(), FLOOR: Measurement()}
    notes: dict[str, str] = {}
    extra: dict[str, str] = {}
    first_extra: dict[str, str] = {}
    stores: dict[str, int] = {}
    first_stores: dict[str, int] = {}
    project = None
    peer = None
    try:
        compose = prepare_engine(ctx, env)
        project = ComposeProject(ctx, env, compose, ctx.work / "compose")
        ctx.log(f"compose: up, and {size(spec.total_bytes)} into the volume ({spec.files:,} files)")
        project.up()
        volume = project.volume_path()
        files = fill_volume(volume, spec, ctx.seed)
        syncfs(volume)
        cairn = ComposeCairn(ctx.cairn_binary, project.directory, ctx.store("cairn-compose"), env,
                             ctx.cairn_unavailable)
        peer = StopTarStart(project, volume, ctx.store("tar-compose"), env)
        peer.fresh_store(ctx.runner)
        floor = StopStart(project, ctx.store("stop-start-keeps-nothing"), env)
        measured = Measured(ctx, project, cairn, volume, files, spec)

        ctx.log("compose: first savepoint")

        def fresh(tool: Tool, run: int) -> None:
            tool.fresh_store(ctx.runner)
            measured.setup(tool, run)

        first, _ = rounds(ctx, [cairn], lambda tool: tool.save(), 1, setup=fresh, after=measured.after)
        if first["cairn"].error is None:
            first_extra["cairn"] = (f"services down {seconds(measured.downtimes['cairn'][0])}; "
                                    f"read {size(measured.read[0])}")
            first_stores["cairn"] = cairn.store_size()
        measured.reset()

        ctx.log(f"compose: savepoints after a {size(spec.change_bytes)} change, with {PEER} and {FLOOR}")
        saves, notes = rounds(ctx, [cairn, peer, floor], lambda tool: tool.save(), ctx.runs,
                              before_run=measured.change, setup=measured.setup, after=measured.after)
        for name, values in measured.downtimes.items():
            down[name].seconds.extend(values)
            if saves[name].error:
                down[name].fail(saves[name].error)
        stores.update({tool.name: tool.store_size() for tool in (cairn, peer) if saves[tool.name].error is None})
        if measured.stored and measured.read:
            extra["cairn"] = (f"stored {size(median(measured.stored))} per savepoint; read "
                              f"{size(median(measured.read))} of the volume "
                              f"({size(median(measured.changed))} of files changed)")
        extra[PEER] = "archive of the whole volume each time"
        extra[FLOOR] = "nothing copied: the engine's own stop and start"
        facts["downtime"] = {name: sorted(v) for name, v in measured.downtimes.items()}
        facts["read_bytes"] = sorted(measured.read)
    except Exception as e:  # no engine, a failed setup step, or a harness bug: the run goes on
        problem = str(e) if isinstance(e, SetupError) else f"harness error: {e!r}"
        ctx.log(f"  compose: {problem}")
        for m in [*first.values(), *down.values(), *saves.values()]:
            if not m.seconds:
                m.fail(problem)
    finally:
        if project is not None:
            ctx.log("compose: down -v")
            project.down()
        if peer is not None:
            remove_tree(peer.store)

    section.add("compose.first", f"first savepoint ({size(spec.total_bytes)} volume), whole command",
                first, stores=first_stores, extra=first_extra)
    change = size(spec.change_bytes)
    above = {}
    if down["cairn"].median is not None and down[FLOOR].median is not None:
        above["cairn"] = f"{seconds(down['cairn'].median - down[FLOOR].median)} above the {FLOOR} floor"
    section.add("compose.downtime", f"service downtime, savepoint after a {change} change", down, extra=above)
    section.add("compose.save", f"savepoint after a {change} change, whole command", saves, notes, stores, extra)


class Measured:
    """What rounds() needs around each savepoint: the change before it, the engine's state and
    the store's size before it, and afterwards the downtime, bytes stored and the checks."""

    def __init__(self, ctx: Context, project: ComposeProject, cairn: ComposeCairn, volume: Path,
                 files: list[VolumeFile], spec: VolumeSpec):
        self.ctx, self.project, self.cairn, self.volume = ctx, project, cairn, volume
        self.files, self.spec = files, spec
        self.reset()

    def reset(self) -> None:
        self.states: dict[str, State] = {}
        self.store_before = 0
        self.changed: list[int] = []
        self.downtimes: dict[str, list[float]] = {"cairn": [], PEER: [], FLOOR: []}
        self.stored: list[int] = []
        self.read: list[int] = []

    def change(self, run: int) -> None:
        self.changed.append(change_volume(self.volume, self.files, self.spec, self.ctx.seed, run))
        syncfs(self.volume)

    def setup(self, tool: Tool, run: int) -> None:
        self.states = self.project.states()
        self.store_before = tool.store_size() if tool is self.cairn else 0

    def after(self, tool: Tool, run: int, outcome: Outcome) -> str | None:
        self.downtimes[tool.name].append(downtime(self.states, self.project.states()))
        if tool is self.cairn:
            tool.saved(self.ctx.runner, outcome)
            self.stored.append(tool.store_size() - self.store_before)
            return self.check_record(tool.last_record)
        if isinstance(tool, StopTarStart):
            # The data is incompressible: a smaller archive means tar did not read it all.
            got = tool.store_size()
            if got < 0.9 * self.spec.total_bytes:
                return f"the archive holds {size(got)}, less than the volume's {size(self.spec.total_bytes)}"
        return None

    def check_record(self, record: dict) -> str | None:
        """The savepoint must hold the whole volume; after the first it must have read only the
        changed files (a savepoint that read the whole volume measures something else)."""
        stats = [s for s in record.get("stats", []) if s.get("object_id") == f"volume-named-{VOLUME}"]
        if not stats:
            return f"the savepoint record has no stats for volume {VOLUME}"
        s = stats[0]
        files = len(self.files)
        total = sum(f.size for f in self.files)
        if s.get("files") != files or s.get("bytes") != total:
            return (f"cairn captured {s.get('files')} files / {s.get('bytes')} bytes of the volume; "
                    f"it holds {files} / {total}")
        read = int(s.get("read_bytes") or 0)
        self.read.append(read)
        if self.changed and read > self.changed[-1]:
            return (f"cairn read {size(read)} of the volume; only {size(self.changed[-1])} of files "
                    f"changed since the last savepoint")
        return None
