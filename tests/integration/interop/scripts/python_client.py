#!/usr/bin/python3
"""Drives pymemcache, python-memcached or pylibmc for cachet's interop tests.

  python_client.py CLIENT PORT probe
  python_client.py CLIENT PORT write   < lines "key<TAB>kind<TAB>hex"
  python_client.py CLIENT PORT read KEY...

CLIENT is pymemcache (with the python-memcached compatible serde, which sets the
flags), memcache (python-memcached) or pylibmc. python-memcached and pylibmc
compress from 100 bytes (zlib); pymemcache 3.5.2 has no compression.
Write kinds: bytes, text (the hex bytes decoded as UTF-8 into a str), int (the hex
bytes are decimal text, stored as a Python int), dict (a fixed dict, pickled).
Read prints "key<TAB>kind<TAB>hex" per key: kind is the Python type name (bytes,
str, int, dict, NoneType) and hex the bytes (str: UTF-8, int: decimal text).
Errors while reading one key print kind "error" and the exception's name.
Exit status 2 means the client module is not installed.
"""
import sys


def make_client(name, port):
    if name == 'pymemcache':
        from pymemcache import serde
        from pymemcache.client.base import Client
        return Client(('127.0.0.1', port), serde=serde.pickle_serde, default_noreply=False,
                      connect_timeout=5, timeout=5), {}
    if name == 'memcache':
        import memcache
        return memcache.Client(['127.0.0.1:%d' % port]), {'min_compress_len': 100}
    if name == 'pylibmc':
        import pylibmc
        return pylibmc.Client(['127.0.0.1:%d' % port]), {'min_compress_len': 100}
    raise SystemExit('unknown client %r' % name)


def value_of(kind, hex_text):
    data = bytes.fromhex(hex_text)
    if kind == 'bytes':
        return data
    if kind == 'text':
        return data.decode('utf-8')
    if kind == 'int':
        return int(data)
    if kind == 'dict':
        return {'name': 'cachet', 'list': [1, 2, 3]}
    raise SystemExit('unknown kind %r' % kind)


def describe(value):
    if isinstance(value, bytes):
        return 'bytes', value.hex()
    if isinstance(value, str):
        return 'str', value.encode('utf-8').hex()
    if isinstance(value, int) and not isinstance(value, bool):
        return 'int', str(value).encode('ascii').hex()
    return type(value).__name__, ''


def main():
    if len(sys.argv) < 4:
        raise SystemExit('usage: python_client.py CLIENT PORT probe|write|read [KEY...]')
    name, port, mode, keys = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
    try:
        client, set_options = make_client(name, port)
    except ImportError as e:
        print('%s is not installed: %s' % (name, e), file=sys.stderr)
        sys.exit(2)
    if mode == 'probe':
        return
    if mode == 'write':
        for line in sys.stdin.read().splitlines():
            key, kind, hex_text = line.split('\t', 2)
            if not client.set(key, value_of(kind, hex_text), **set_options):
                raise SystemExit('set %s failed' % key)
    elif mode == 'read':
        for key in keys:
            try:
                kind, hex_text = describe(client.get(key))
            except Exception as e:  # one bad value must not hide the others
                kind, hex_text = 'error', type(e).__name__.encode('ascii').hex()
            print('%s\t%s\t%s' % (key, kind, hex_text))
    else:
        raise SystemExit('unknown mode %r' % mode)


if __name__ == '__main__':
    main()
