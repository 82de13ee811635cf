"""A small writer of uncompressed zip archives laid out the way ``torch.save`` lays them out.

Every record is stored (no compression) and its data starts on a 64-byte
boundary (the local header's extra field is padded, as PyTorch does), so a
reader may map tensor bytes straight from the file. Records larger than 4 GiB,
or past 4 GiB into the file, get zip64 fields; the end of the archive always
carries a zip64 end record. Only ``write()`` is needed from the output: it may
be a pipe.
"""
import struct
import zlib

ALIGN = 64
ZIP64_LIMIT = 0xFFFFFFFF      # NOTE: a module constant so tests can exercise the zip64 path
_DOS_DATE = (0 << 9) | (1 << 5) | 1     # 1980-01-01: the zip epoch
_PAD_ID = 0x4246                        # b"FB": PyTorch's padding extra field


class ZipWriter:
    """Write records one after the other, then the central directory on ``close()``.

    Args:
        out: a binary file object (only ``write`` is used).

    Example:
        >>> import io
        >>> w = ZipWriter(io.BytesIO()); w.add("archive/version", b"3\\n"); w.close()
    """

    def __init__(self, out):
        self.out = out
        self.offset = 0
        self.entries = []       # (name bytes, crc, size, header offset)

    def _write(self, data):
        self.out.write(data)
        self.offset += len(data)

    def add(self, name, data):
        """Append record ``name`` holding ``data`` (bytes or a contiguous buffer)."""
        view = memoryview(data).cast("B")
        size = view.nbytes
        crc = zlib.crc32(view)
        bname = name.encode("utf-8")
        big = size >= ZIP64_LIMIT or self.offset >= ZIP64_LIMIT
        z64 = struct.pack("<HHQQ", 1, 16, size, size) if big else b""
        start = self.offset + 30 + len(bname) + len(z64) + 4
        pad = (-start) % ALIGN
        extra = z64 + struct.pack("<HH", _PAD_ID, pad) + b"Z" * pad
        shown = 0xFFFFFFFF if big else size
        header = struct.pack("<IHHHHHIIIHH", 0x04034B50, 45 if big else 20, 0x0800, 0, 0,
                             _DOS_DATE, crc, shown, shown, len(bname), len(extra))
        self.entries.append((bname, crc, size, self.offset))
        self._write(header + bname + extra)
        if size:
            self._write(view)

    def _central_entry(self, bname, crc, size, offset):
        fields = []
        if size >= ZIP64_LIMIT:
            fields += [size, size]
        if offset >= ZIP64_LIMIT:
            fields.append(offset)
        extra = struct.pack(f"<HH{len(fields)}Q", 1, 8 * len(fields), *fields) if fields else b""
        shown = 0xFFFFFFFF if size >= ZIP64_LIMIT else size
        return struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45 if fields else 20, 0x0800, 0,
                           0, _DOS_DATE, crc, shown, shown, len(bname), len(extra), 0, 0, 0, 0,
                           min(offset, 0xFFFFFFFF)) + bname + extra

    def close(self):
        """Write the central directory and the end records; the archive is complete after this."""
        cd_start = self.offset
        for entry in self.entries:
            self._write(self._central_entry(*entry))
        cd_size = self.offset - cd_start
        n = len(self.entries)
        z64_start = self.offset
        self._write(struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, n, n, cd_size,
                                cd_start))
        self._write(struct.pack("<IIQI", 0x07064B50, 0, z64_start, 1))
        self._write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, min(n, 0xFFFF), min(n, 0xFFFF),
                                min(cd_size, 0xFFFFFFFF), min(cd_start, 0xFFFFFFFF), 0))
