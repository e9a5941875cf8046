"""The frames a sandboxed child sends its parent, both ends of them in one place.

A child writes one frame per event on its result pipe: a 4-byte big-endian length, then that many bytes of
JSON holding one object whose "k" says what it is, in this order:
  {"k": "started"}                      set-up done; the job's code runs next (a crash before it is a set-up
                                        failure of the zygote, one after it the job's own)
  {"k": "defined"} | {"k": "undefined", "error": text}   the job's code ran, or raised
  {"k": "ok", "i": n, "v": value} | {"k": "error", "i": n, "error": text}   call n's plain value
                                        (codea1.sandbox.values' tagged form), or its exception
  {"k": "done", "out": text}            the calls are over; captured stdout and stderr (capped)
The parent reads them with FrameReader, each before a deadline, and treats anything else as a broken
child: a frame larger than MAX_FRAME, more than MAX_CHILD_BYTES in all (MAX_JOB_BYTES for all the
children of one job together), more than MAX_FRAME_NODES
containers or separators (checked on the raw bytes before parsing), or text that is not one JSON object.
Imported by the zygote, so it holds only the standard library and the values module.
"""

from __future__ import annotations

import json
import math
import os
import select
import time

from codea1.sandbox import values

MAX_FRAME = 16 << 20  # bytes of one result frame; a larger announced frame is a protocol violation
MAX_CHILD_BYTES = 64 << 20  # bytes one child may send in all; past that it is treated as malformed
MAX_JOB_BYTES = 2 * MAX_CHILD_BYTES  # bytes all children of one job may send together (a restart does not
# give a job a fresh allowance: calls that each send a lot and then crash cannot make the parent read more)
# containers ("[", "{") and separators (",") one frame may hold outside its strings, counted on the raw bytes
# before parsing: an honest frame holds at most values.MAX_ITEMS elements, each at most a few of each
MAX_FRAME_NODES = 4 * values.MAX_ITEMS + 64
_dumps = json.dumps  # the child's own reference, taken before any candidate code runs


def encode_frame(obj: dict) -> bytes:
    """One frame: the length prefix and the JSON of `obj` (the child's side)."""
    data = _dumps(obj).encode()
    return len(data).to_bytes(4, "big") + data


class FrameReader:
    """Reads length-prefixed JSON frames from a child's result pipe, each before a deadline."""

    def __init__(self, fd: int, budget: int = MAX_CHILD_BYTES) -> None:
        self.fd = fd
        self.budget = min(int(budget), MAX_CHILD_BYTES)  # bytes this child may send (less when its job sent some)
        self.buf = bytearray()
        self.eof = False
        self.total = 0
        self.poller = select.poll()
        self.poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)

    def read(self, deadline: float) -> dict | str:
        """A decoded frame, or "timeout", "eof" or "bad" (malformed or oversized frame)."""
        need = 4
        while True:
            if len(self.buf) >= 4:
                size = int.from_bytes(self.buf[:4], "big")
                if size > MAX_FRAME:
                    return "bad"
                need = 4 + size
                if len(self.buf) >= need:
                    data = bytes(self.buf[4:need])
                    del self.buf[:need]
                    if not frame_bounded(data):
                        return "bad"
                    try:
                        obj = json.loads(data)
                    except (ValueError, RecursionError, MemoryError):
                        return "bad"
                    return obj if type(obj) is dict else "bad"
            if self.eof:
                return "eof"
            left = deadline - time.monotonic()
            if left <= 0:
                return "timeout"
            if not self.poller.poll(max(1, math.ceil(left * 1000))):  # poll: no FD_SETSIZE limit
                continue
            chunk = os.read(self.fd, max(1 << 16, min(need - len(self.buf), MAX_FRAME)))
            if not chunk:
                self.eof = True
            else:
                self.total += len(chunk)
                if self.total > self.budget:
                    return "bad"
                self.buf += chunk


def frame_bounded(data: bytes) -> bool:
    """Whether parsing `data` builds at most MAX_FRAME_NODES containers and as many elements.

    Checked on the raw bytes before json.loads sees them, at C speed (replace, split, count), so that a
    16 MB frame of empty lists (millions of objects once parsed) is rejected in milliseconds without
    the parent's memory growing. Brackets and commas inside strings do not count: escaped backslashes
    and quotes are blanked first, then the text splits on quotes into outside/inside runs. On a frame
    that is not valid JSON the split may be wrong only past the point where json.loads stops anyway.
    """
    if data.count(b"[") + data.count(b"{") <= MAX_FRAME_NODES and data.count(b",") <= MAX_FRAME_NODES:
        return True
    outside = b"".join(data.replace(b"\\\\", b"__").replace(b'\\"', b"__").split(b'"')[0::2])
    return outside.count(b"[") + outside.count(b"{") <= MAX_FRAME_NODES and outside.count(b",") <= MAX_FRAME_NODES
