"""The fact index's table of distinct texts: each text's row (its id for good), its vector and the
text itself, held small in memory and on disk.

Measured on a 32,000-page real-shaped wiki (151,748 distinct fact texts): int8 vectors and plain
texts took 70 MB of the index file (0.6x the pages' bytes before anything else) and ~120 MB of the
station's memory. Here:

* **vectors in 8 bits for the first :data:`PREFIX` coordinates and 4 bits for the rest** (a scale
  per row for each part): 160 bytes a row at 256 dimensions, where int8 took 256. The prefix is
  what a big wiki's first, coarse pass compares (WordLlama is trained so that a prefix embeds), so
  it keeps int8's precision. Cosines of close pairs stay within 0.007 of float32's on average
  (4 bits throughout: 0.009, and a planted paraphrase group fell apart): enough to rank
  neighbours, which is all a stored vector is used for (the write door's same-page check embeds
  the page's facts exactly).
* **texts compressed** :data:`BLOCK` at a time (zlib: 21.7 MB of texts in 6.4 MB), one block
  read back when one of its texts is asked for, every block at once for a whole-wiki pass.
* **a text found by a 64-bit hash** of it, in a sorted array (a dict of 150,000 byte strings
  took 15 MB).

Rows are added, never removed (the nearest texts and the notes name texts by row); a rebuild of
the index starts the table over.
"""

from __future__ import annotations

import hashlib
import json
import threading
import zlib
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

import numpy as np

from curator.engine.errors import CuratorError

#: Texts per stored block (and per compressed run of texts).
BLOCK = 64
#: Decoded blocks of texts kept (a per-page question reads a few dozen).
DECODED_BLOCKS = 192
#: The coordinates kept in 8 bits (the rest in 4).
PREFIX = 64
#: The 4-bit codes of a coordinate: -LEVELS..LEVELS (stored plus 8, in a nibble).
LEVELS = 7


class DamagedTable(CuratorError):
    """A stored block of texts does not decode (the file was damaged after it was read back)."""


def text_hashes(texts: Iterable[str]) -> np.ndarray:
    """A 64-bit hash of each text (the table's key for it)."""
    digest = b"".join(hashlib.sha1(t.encode("utf-8", "surrogateescape")).digest()[:8] for t in texts)
    return np.frombuffer(digest, dtype="<u8").astype(np.uint64)


def _scales(rows: np.ndarray, levels: int) -> np.ndarray:
    scales = np.abs(rows).max(axis=1) / levels if rows.size else np.ones(len(rows), dtype=np.float32)
    scales[scales == 0] = 1.0
    return scales.astype(np.float32)


def quantise(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unit float32 ``rows`` as (codes: the prefix's int8 then the rest's packed nibbles; the two
    scales of each row)."""
    rows = np.asarray(rows, dtype=np.float32)
    head, rest = rows[:, :PREFIX], rows[:, PREFIX:]
    if rest.shape[1] % 2:
        rest = np.hstack([rest, np.zeros((len(rest), 1), dtype=np.float32)])
    head_scale, rest_scale = _scales(head, 127), _scales(rest, LEVELS)
    head_codes = np.clip(np.rint(head / head_scale[:, None]), -127, 127).astype(np.int8).view(np.uint8)
    nibbles = (np.clip(np.rint(rest / rest_scale[:, None]), -LEVELS, LEVELS) + 8).astype(np.uint8)
    packed = (nibbles[:, 0::2] | (nibbles[:, 1::2] << 4)).astype(np.uint8)
    codes, scales = np.hstack([head_codes, packed]), np.stack([head_scale, rest_scale], axis=1)
    # Rounding adds length to a vector (1.01-1.03 for unit rows), and a dot product of two such
    # rows reads higher than their cosine: the scales are set so each row reads back unit length.
    lengths = np.linalg.norm(_read(codes, scales, rows.shape[1]), axis=1)
    lengths[lengths == 0] = 1.0
    # (stored in float16: a vector then reads back within 0.1 % of unit length)
    return codes, (scales / lengths[:, None]).astype(np.float16).astype(np.float32)


def _read(codes: np.ndarray, scales: np.ndarray, dims: int) -> np.ndarray:
    out: np.ndarray = unpack(codes, dims).astype(np.float32)
    out[:, :PREFIX] *= scales[:, :1]
    out[:, PREFIX:] *= scales[:, 1:]
    return out


def unpack(codes: np.ndarray, dims: int) -> np.ndarray:
    """The int8 codes of the first ``dims`` coordinates of rows of ``codes`` (each part on its
    own scale)."""
    head = codes[:, :min(dims, PREFIX)].view(np.int8)
    if dims <= PREFIX:
        return head
    half = (dims - PREFIX + 1) // 2
    part = codes[:, PREFIX:PREFIX + half]
    rest = np.empty((len(codes), 2 * half), dtype=np.int8)
    rest[:, 0::2] = (part & 15).astype(np.int8) - 8
    rest[:, 1::2] = (part >> 4).astype(np.int8) - 8
    return np.hstack([head, rest[:, :dims - PREFIX]])


class TextTable:
    """Distinct texts by row: hash, vector (4 bits a coordinate), text (compressed by block).
    Thread-safe for readers; the fact index adds rows under its own lock."""

    def __init__(self) -> None:
        self.dim = 0
        self.count = 0
        self._codes = np.zeros((0, 0), dtype=np.uint8)
        self._scales = np.zeros((0, 2), dtype=np.float32)
        self._hashes = np.zeros(0, dtype=np.uint64)
        #: the texts of each full block, compressed; the last block's as a list until it is full
        self._blocks: list[bytes] = []
        self._tail: list[str] = []
        self._decoded: OrderedDict[int, list[str]] = OrderedDict()
        self._lock = threading.Lock()
        # hash lookup: the rows sorted by hash, and the rows added since they were sorted
        self._sorted_keys = np.zeros(0, dtype=np.uint64)
        self._sorted_rows = np.zeros(0, dtype=np.int32)
        self._recent: dict[int, int] = {}
        #: blocks changed since the last :meth:`take_changed`
        self._changed: set[int] = set()
        #: a block of texts did not decode when read (see :meth:`_full_block`)
        self.damaged = False
        #: every text, while a pass over many of them runs (see :meth:`bulk`)
        self._all: list[str] | None = None
        self._bulk_users = 0

    # --- finding and adding -----------------------------------------------------------------
    def find(self, hashes: np.ndarray) -> np.ndarray:
        """The row of each hash, -1 where the table has no such text."""
        out = np.full(len(hashes), -1, dtype=np.int64)
        if len(self._sorted_keys):
            at = np.minimum(np.searchsorted(self._sorted_keys, hashes), len(self._sorted_keys) - 1)
            hit = self._sorted_keys[at] == hashes
            out[hit] = self._sorted_rows[at[hit]]
        if self._recent:
            for i in np.flatnonzero(out < 0).tolist():
                out[i] = self._recent.get(int(hashes[i]), -1)
        return out

    def add(self, hashes: np.ndarray, texts: list[str], vectors: np.ndarray) -> int:
        """Append texts (not in the table) with their unit vectors; the first new row."""
        codes, scales = quantise(vectors)
        first, need = self.count, self.count + len(texts)
        if self.dim == 0:
            self.dim = vectors.shape[1]
        if need > len(self._codes) or self._codes.shape[1] != codes.shape[1]:
            room = max(need, int(1.25 * len(self._codes)) + 1024)
            self._codes = _grown(self._codes, (room, codes.shape[1]), first)
            self._scales = _grown(self._scales, (room, 2), first)
            self._hashes = _grown(self._hashes, (room,), first)
        self._codes[first:need], self._scales[first:need], self._hashes[first:need] = codes, scales, hashes
        self._recent.update(zip(hashes.tolist(), range(first, need), strict=True))
        for text in texts:
            self._tail.append(text)
            if len(self._tail) == BLOCK:
                self._changed.add(len(self._blocks))
                self._blocks.append(_compress(self._tail))
                self._tail = []
        self._changed.add(len(self._blocks))
        self.count = need
        if len(self._recent) > 4096:
            self._sort()
        return first

    def _sort(self) -> None:
        order = np.argsort(self._hashes[:self.count], kind="stable")
        self._sorted_keys, self._sorted_rows = self._hashes[:self.count][order], order.astype(np.int32)
        self._recent = {}

    # --- texts ------------------------------------------------------------------------------
    def text(self, row: int) -> str:
        every = self._all
        if every is not None and row < len(every):
            return every[row]
        return self._block(row // BLOCK)[row % BLOCK]

    @contextmanager
    def bulk(self, wanted: bool = True) -> Iterator[None]:
        """Every text read back at once for the time of the block (a pass over many texts would
        read each block again and again; all of a big wiki's take 0.2 s and ~30 MB while it runs)."""
        if not wanted:
            yield
            return
        with self._lock:
            self._bulk_users += 1
        try:
            if self._all is None:
                self._all = self.all_texts()
            yield
        finally:
            with self._lock:
                self._bulk_users -= 1
                if not self._bulk_users:
                    self._all = None

    def texts(self, rows: Iterable[int]) -> list[str]:
        return [self.text(r) for r in rows]

    def all_texts(self) -> list[str]:
        """Every text by row (for a pass over the whole wiki; not kept)."""
        out: list[str] = []
        for number in range(len(self._blocks)):
            out += self._decoded.get(number) or self._full_block(number)
        return out + self._tail

    def _block(self, number: int) -> list[str]:
        if number == len(self._blocks):
            return self._tail
        with self._lock:
            texts = self._decoded.get(number)
            if texts is None:
                texts = self._decoded[number] = self._full_block(number)
                if len(self._decoded) > DECODED_BLOCKS:
                    self._decoded.popitem(last=False)
            else:
                self._decoded.move_to_end(number)
            return texts

    def _full_block(self, number: int) -> list[str]:
        """The texts of full block ``number``, decompressed now: checked here, not when the
        table was read back (decompressing every block took 0.18 s of a one-shot append at
        32,000 pages, which reads a few). A block that does not decode marks the table
        :attr:`damaged` (the fact index then builds itself again) and says so in one line."""
        try:
            texts = _decompress(self._blocks[number])
            if len(texts) != BLOCK or not all(isinstance(t, str) for t in texts):
                raise ValueError("a damaged block of texts")
        except ValueError:
            self.damaged = True
            raise DamagedTable("the fact index is damaged: it is built again on the next run") from None
        return texts

    # --- vectors ----------------------------------------------------------------------------
    def vectors(self, rows: np.ndarray | slice, dims: int | None = None) -> np.ndarray:
        """Float32 vectors of ``rows`` (their first ``dims`` coordinates), as stored."""
        return _read(self._codes[rows], self._scales[rows], self.dim if dims is None else dims)

    def codes(self, rows: slice, dims: int) -> np.ndarray:
        """The int8 codes of the first ``dims`` coordinates of ``rows``: up to :data:`PREFIX`,
        one scale, so a cosine of prefixes needs none; else the vectors."""
        return unpack(self._codes[rows], dims) if dims <= PREFIX else self.vectors(rows, dims)

    # --- stored by block --------------------------------------------------------------------
    def take_changed(self) -> list[tuple[int, bytes, bytes, bytes, bytes]]:
        """The blocks changed since the last call, as (number, hashes, texts, codes, scales)."""
        out = []
        for number in sorted(self._changed):
            start, stop = number * BLOCK, min(self.count, (number + 1) * BLOCK)
            if stop <= start:
                continue
            texts = self._blocks[number] if number < len(self._blocks) else _compress(self._tail)
            out.append((number, self._hashes[start:stop].astype("<u8").tobytes(), texts,
                        self._codes[start:stop].tobytes(), self._scales[start:stop].astype("<f2").tobytes()))
        self._changed.clear()
        return out

    def load(self, blocks: Iterable[tuple[int, bytes, bytes, bytes, bytes]], dim: int, rows: int = 0) -> None:
        """Read the stored blocks back (in order; ``rows``: about how many there are, to make
        room once); ValueError when they do not fit together."""
        width = min(dim, PREFIX) + (max(dim - PREFIX, 0) + 1) // 2
        self.dim, self._blocks, self._tail, self.count, self.damaged = dim, [], [], 0, False
        self._codes = np.zeros((rows, width), dtype=np.uint8)
        self._scales = np.zeros((rows, 2), dtype=np.float32)
        self._hashes = np.zeros(rows, dtype=np.uint64)
        last = False
        for number, h, texts, c, s in blocks:  # (one at a time: each block is copied into place)
            if last or number != len(self._blocks):
                raise ValueError("the text table has gaps")
            part = np.frombuffer(h, dtype="<u8")
            # (a full block's texts are checked when first read: see _full_block)
            listed = _decompress(texts) if len(part) < BLOCK else []
            if not all(isinstance(t, str) for t in listed) or len(listed) not in (0, len(part)) \
                    or len(c) != len(part) * width or len(s) != 4 * len(part) or not 0 < len(part) <= BLOCK:
                raise ValueError("a damaged block of texts")
            start, stop = self.count, self.count + len(part)
            if stop > len(self._codes):
                room = max(stop, 2 * len(self._codes))
                self._codes = _grown(self._codes, (room, width), start)
                self._scales = _grown(self._scales, (room, 2), start)
                self._hashes = _grown(self._hashes, (room,), start)
            self._hashes[start:stop] = part
            self._codes[start:stop] = np.frombuffer(c, dtype=np.uint8).reshape(len(part), width)
            self._scales[start:stop] = np.frombuffer(s, dtype="<f2").reshape(len(part), 2)
            if len(part) == BLOCK:
                self._blocks.append(bytes(texts))
            else:
                self._tail, last = listed, True
            self.count = stop
        self._decoded.clear()
        self._changed.clear()
        self._sort()


def _grown(array: np.ndarray, shape: tuple[int, ...], keep: int) -> np.ndarray:
    out = np.zeros(shape, dtype=array.dtype)
    if keep:
        out[:keep] = array[:keep]
    return out


def _compress(texts: list[str]) -> bytes:
    return zlib.compress(json.dumps(texts, ensure_ascii=False).encode("utf-8", "surrogatepass"), 6)


def _decompress(blob: bytes) -> list[str]:
    try:
        texts = json.loads(zlib.decompress(blob).decode("utf-8", "surrogatepass"))
    except (zlib.error, UnicodeDecodeError) as exc:
        raise ValueError("a damaged block of texts") from exc
    if not isinstance(texts, list):
        raise ValueError("a damaged block of texts")
    return texts
