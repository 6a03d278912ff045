"""The filesystem the benchmark works in.

By default (as root, where loop devices exist) the harness makes a fresh ext4 filesystem in a
sparse image file under bench/work, attaches it to a loop device with direct I/O (so its data
is not cached twice), and works inside it. Reasons:

- Every run starts from the same empty filesystem, whatever the host disk has been through.
- Deleting trees between runs must be cheap. Some hosts mount with `discard`, which on some
  virtual disks turns every freed extent into a synchronous discard: there, `rm -rf` of a
  50,000-file tree took minutes, and a benchmark that restores such a tree 40 times could not
  clean up after itself. The image is made with `nodiscard`; at the end it is unmounted and
  deleted as one file.

`--host-fs` skips all this and works in bench/work on the host's own filesystem.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path


class ScratchFs:
    def __init__(self, work: Path):
        self.work = work
        self.image = work / "fs.img"
        self.mountpoint = work / "fs"
        self.device: str | None = None

    # ------------------------------------------------------------------ lifecycle

    def clean(self, log=print) -> None:
        """Remove what an earlier run left, unmounting its filesystem if it is still there."""
        if self._mounted():
            log(f"unmounting {self.mountpoint} left by an earlier run")
            self._unmount()
        if self.work.exists():
            subprocess.run(["rm", "-rf", "--", str(self.work)], check=True)

    def available(self) -> str | None:
        """None if a loop filesystem can be made here, else why not."""
        if os.geteuid() != 0:
            return "not running as root"
        for tool in ("losetup", "mkfs.ext4", "mount", "umount"):
            if shutil.which(tool) is None:
                return f"{tool} is not installed"
        if not Path("/dev/loop-control").exists():
            return "this kernel has no loop devices"
        return None

    def create(self, size_bytes: int, inodes: int | None = None) -> Path:
        """Make, attach and mount the image; returns where to work. `inodes` overrides
        mkfs's default of one per 16 kB, which a tree of small files with its copies and
        git's loose objects can run out of before the space."""
        self.work.mkdir(parents=True, exist_ok=True)
        with open(self.image, "wb") as f:
            f.truncate(size_bytes)
        extra = ["-N", str(inodes)] if inodes else []
        subprocess.run(["mkfs.ext4", "-q", "-F", "-E", "nodiscard", *extra, "-L", "cairn-bench", str(self.image)],
                       check=True, capture_output=True)
        self.device = subprocess.run(["losetup", "--find", "--show", "--direct-io=on", str(self.image)],
                                     check=True, capture_output=True, text=True).stdout.strip()
        self.mountpoint.mkdir()
        # noinit_itable: otherwise the kernel zeroes the new file system's inode tables in the
        # background for minutes, writing under the first measurements (a first save ran 4x slower).
        subprocess.run(["mount", "-o", "noatime,noinit_itable", self.device, str(self.mountpoint)],
                       check=True, capture_output=True)
        return self.mountpoint

    def destroy(self) -> None:
        """Unmount, detach and delete the image."""
        if self._mounted():
            self._unmount()
        subprocess.run(["rm", "-rf", "--", str(self.work)], check=True)

    # ------------------------------------------------------------------ helpers

    def _mounted(self) -> bool:
        return subprocess.run(["mountpoint", "-q", str(self.mountpoint)]).returncode == 0

    def _unmount(self) -> None:
        source = subprocess.run(["findmnt", "-n", "-o", "SOURCE", "--target", str(self.mountpoint)],
                                capture_output=True, text=True).stdout.strip()
        subprocess.run(["umount", str(self.mountpoint)], check=True)
        if source.startswith("/dev/loop"):
            subprocess.run(["losetup", "-d", source], capture_output=True)


def describe(path: Path) -> str:
    """Filesystem type and mount options of `path`, and for a loop device what backs it."""
    fs = subprocess.run(["findmnt", "-n", "-o", "FSTYPE,OPTIONS,SOURCE", "--target", str(path)],
                        capture_output=True, text=True).stdout.split()
    if len(fs) < 3:
        return "unknown filesystem"
    kind, options, source = fs[0], fs[1], fs[2]
    text = f"{kind} ({options})"
    if source.startswith("/dev/loop"):
        backing = subprocess.run(["losetup", "-n", "-O", "BACK-FILE,DIO", source],
                                 capture_output=True, text=True).stdout.split()
        if backing:
            host = describe(Path(backing[0]).parent)
            dio = ", direct I/O" if len(backing) > 1 and backing[1] == "1" else ""
            text += f" on loop device {source}{dio}, its image on the host's {host}"
    return text


def syncfs(path: Path) -> None:
    """Write back this filesystem's dirty data (not the whole machine's, which `sync` would
    wait for, builds and all)."""
    subprocess.run(["sync", "--file-system", str(path)], check=False)
