"""Land what one `scripts/queue_round.sh` call brought back into the tree, so no result is lost by hand.

A call returns summary.txt and queue.tar.gz (scripts/queue_round.sh says what they hold). This puts
- the new run files (results/ in the archive) into results/<gpu>/, never over a file already there;
- each step's round.tar.gz: its results/<gpu>/ files that the tree lacks (optimize ledgers, rounds/ logs,
  run files), never over one already there (a file that differs is named, not copied);
- the solution files the steps changed (changed/solutions/...) over the tree's;
- each step's stdout, stderr and other text outputs into results/<gpu>/rounds/, named by the time the file was
  written on the device (UTC) and the step: 20261206-1053-h100-rotary-hints.txt, ...-ab-rotary-hints.txt;
- the summary as rounds/<time>-queue-summary.txt;
- builds.tar.gz beside queue.tar.gz (the CUDA solutions' builds) at .cache/builds/<gpu>.tar.gz, merged with the
  one there: not a result but a cache (git ignores it), carried so the next call loads those libraries instead of
  building them again. A call packs only its new builds when all of them would pass 8 MiB (a probe's variants,
  say), so the carried builds it lacks (the routes' own) are kept beside them, newest first, up to BUILDS_CAP.
A folder without queue.tar.gz but with a round.tar.gz is one scripts/workload_round.sh call made directly (not
through the queue): its archive lands as a step's does, and its text outputs (bench.log, confirm.log, goals.md, ...)
as rounds/<time>-STEP-<name>, STEP from --step (default "round").
Prints one line per file written; --dry-run prints them and writes nothing.
  python3 scripts/land_queue.py FOLDER_WITH_QUEUE_TAR [--repo .] [--dry-run] [--step NAME]
"""

import argparse
import io
import re
import sys
import tarfile
import time
from pathlib import Path

TEXT_SUFFIXES = {".txt", ".log", ".md", ".tsv", ".json", ".jsonl"}
BUILDS_CAP = 12 * 2**20  # bytes of the merged builds: with the 41 MiB tree and the other carried files, under 64 MiB


def stamp(mtime: float) -> str:
    return time.strftime("%Y%m%d-%H%M", time.gmtime(mtime))


def _folders(data: bytes) -> dict[str, list[tuple[tarfile.TarInfo, bytes]]]:
    """A builds tarball's members by build folder (torch_extensions/<python, torch, gpu>/<extension>)."""
    folders: dict[str, list] = {}
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for member in tar.getmembers():
            body = tar.extractfile(member).read() if member.isfile() else b""
            folders.setdefault("/".join(member.name.removeprefix("./").split("/")[:3]), []).append((member, body))
    return folders


def _pack(folders: list[list[tuple[tarfile.TarInfo, bytes]]]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for members in folders:
            for member, body in members:
                tar.addfile(member, io.BytesIO(body) if member.isfile() else None)
    return out.getvalue()


def merged_builds(new: bytes, old: bytes | None, cap: int = BUILDS_CAP) -> tuple[bytes, list[str]]:
    """The call's builds plus the carried ones it lacks, the most recently built first, as long as the tarball
    stays under `cap`; returns it and the carried folders left out. A carried file that is no tarball is replaced."""
    try:
        carried = _folders(old) if old else {}
    except (tarfile.TarError, OSError, EOFError):
        carried = {}
    if not carried:
        return new, []
    fresh = _folders(new)
    kept, dropped, packed = list(fresh.values()), [], new
    by_age = sorted((f for f in carried if f not in fresh), key=lambda f: -max(m.mtime for m, _ in carried[f]))
    for folder in by_age:
        trial = _pack(kept + [carried[folder]])
        if len(trial) <= cap:
            kept.append(carried[folder])
            packed = trial
        else:
            dropped.append(folder)
    return packed, dropped


def gpu_slug(summary: str) -> str | None:
    """The results folder the summary's first line names: 'GPU: NVIDIA H100 ... (results/<slug>); ...'."""
    found = re.search(r"\(results/([a-z0-9-]+)\)", summary.splitlines()[0] if summary else "")
    return found.group(1) if found else None


class Lander:
    def __init__(self, repo: Path, dry_run: bool):
        self.repo, self.dry_run, self.written, self.differing = repo, dry_run, [], []

    def put(self, rel: str, data: bytes, overwrite: bool = False) -> None:
        path = self.repo / rel
        if path.exists() and not overwrite:
            if path.read_bytes() != data:
                self.differing.append(rel)
            return
        if path.exists() and path.read_bytes() == data:
            return
        if not self.dry_run:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        self.written.append(rel)

    def round_archive(self, data: bytes, slug: str) -> None:
        """A step's round.tar.gz (scripts/workload_round.sh): the results/<slug>/ files the tree lacks."""
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            for member in tar.getmembers():
                if member.isfile() and member.name.startswith(f"results/{slug}/"):
                    self.put(member.name, tar.extractfile(member).read())

    def land_round(self, folder: Path, step: str) -> str:
        """A workload_round.sh call's folder: round.tar.gz and its text outputs beside it."""
        data = (folder / "round.tar.gz").read_bytes()
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            slugs = {m.name.split("/")[1] for m in tar.getmembers()
                     if m.isfile() and m.name.startswith("results/") and m.name.count("/") >= 2}
        if len(slugs) != 1:
            raise SystemExit(f"land_queue: {folder / 'round.tar.gz'}: holds {len(slugs)} results/<gpu> folders, "
                             "not one")
        slug = slugs.pop()
        self.round_archive(data, slug)
        for path in sorted(p for p in folder.iterdir() if p.is_file() and p.suffix in TEXT_SUFFIXES):
            text = path.read_bytes()
            if text.strip():
                self.put(f"results/{slug}/rounds/{stamp(path.stat().st_mtime)}-{step}-{path.name}", text)
        return slug

    def land(self, folder: Path, step: str = "round") -> str:
        archive = folder / "queue.tar.gz"
        if not archive.is_file() and (folder / "round.tar.gz").is_file():
            return self.land_round(folder, step)
        if not archive.is_file():
            raise SystemExit(f"land_queue: {archive}: no such file (the call brought nothing back)")
        with tarfile.open(archive) as tar:
            members = {m.name.removeprefix("./"): m for m in tar.getmembers() if m.isfile()}
            summary = tar.extractfile(members["summary.txt"]).read() if "summary.txt" in members else b""
            slug = gpu_slug(summary.decode(errors="replace"))
            if slug is None:
                raise SystemExit(f"land_queue: {archive}: summary.txt names no results/<gpu> folder")
            rounds = f"results/{slug}/rounds"
            for name, member in sorted(members.items()):
                data = tar.extractfile(member).read()
                parts = name.split("/")
                if parts[0] == "results" and len(parts) == 2:
                    self.put(f"results/{slug}/{parts[1]}", data)
                elif parts[0] == "changed" and parts[1:2] == ["solutions"]:
                    self.put("/".join(parts[1:]), data, overwrite=True)
                elif parts[0] == "steps" and len(parts) >= 3:
                    step, rest = parts[1], parts[2:]
                    when = stamp(member.mtime)
                    if rest == ["round.tar.gz"]:
                        self.round_archive(data, slug)
                    elif rest == ["stdout.txt"]:
                        self.put(f"{rounds}/{when}-{step}.txt", data)
                    elif rest == ["logs", f"{step}.log"]:
                        if data.strip():
                            self.put(f"{rounds}/{when}-{step}.log", data)
                    elif Path(rest[-1]).suffix in TEXT_SUFFIXES and data.strip():
                        self.put(f"{rounds}/{when}-{step}-{rest[-1]}", data)
                elif name == "summary.txt":
                    self.put(f"{rounds}/{stamp(member.mtime)}-queue-summary.txt", data)
        builds = folder / "builds.tar.gz"
        if builds.is_file():
            carried = self.repo / ".cache" / "builds" / f"{slug}.tar.gz"
            merged, dropped = merged_builds(builds.read_bytes(), carried.read_bytes() if carried.is_file() else None)
            for name in dropped:
                print(f"builds: {name} left out of .cache/builds/{slug}.tar.gz (over {BUILDS_CAP >> 20} MiB)")
            self.put(f".cache/builds/{slug}.tar.gz", merged, overwrite=True)
        return slug


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="the folder holding the call's queue.tar.gz")
    parser.add_argument("--repo", type=Path, default=Path("."), help="the tree to land into")
    parser.add_argument("--dry-run", action="store_true", help="list what would be written, write nothing")
    parser.add_argument("--step", default="round", help="a direct workload round's name in its rounds/ files")
    args = parser.parse_args(argv)
    lander = Lander(args.repo, args.dry_run)
    try:
        lander.land(args.folder, args.step)
    except (tarfile.TarError, OSError) as error:
        print(f"land_queue: {args.folder / 'queue.tar.gz'}: {error}", file=sys.stderr)
        return 1
    verb = "would write" if args.dry_run else "wrote"
    for rel in lander.written:
        print(f"{verb} {rel}")
    for rel in lander.differing:
        print(f"left {rel}: the tree's copy differs (not overwritten)")
    if not lander.written:
        print("nothing new to land")
    return 0


if __name__ == "__main__":
    sys.exit(main())
