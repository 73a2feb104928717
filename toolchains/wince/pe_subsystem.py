#!/usr/bin/env python3
"""pe_subsystem.py - marks a PE file as a Windows CE program.

usage: pe_subsystem.py EXE

lld 14 cannot write subsystem 9 (IMAGE_SUBSYSTEM_WINDOWS_CE_GUI), the one
Windows CE's loader expects, so the build writes it after the link: the
two-byte Subsystem field of the optional header, 68 bytes into it."""
import struct
import sys

CE_GUI = 9


def main():
    path = sys.argv[1]
    with open(path, "r+b") as f:
        head = f.read(64)
        if head[:2] != b"MZ":
            sys.exit("pe_subsystem: %s is not a PE file" % path)
        pe = struct.unpack_from("<I", head, 0x3C)[0]
        f.seek(pe)
        if f.read(4) != b"PE\0\0":
            sys.exit("pe_subsystem: %s has no PE header" % path)
        f.seek(pe + 4 + 20 + 68)            # signature, file header, then the field
        f.write(struct.pack("<H", CE_GUI))


if __name__ == "__main__":
    main()
