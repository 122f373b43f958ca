"""The command line, the skips and the cleanup that the nginx tests share.

A test is a class built from the parsed arguments, with run() raising FAILURE for
what it checks and cleanup() stopping everything it started; run() here returns
the exit status ctest reads: 0, 1, or 77 (skipped) when nginx or its Lua module is
missing.
"""
import argparse
import os
import shutil
import signal
import sys
import traceback


def run(description, test_class, failure):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--nginx", required=True)
    parser.add_argument("--modules", required=True)
    parser.add_argument("--lua-tree", required=True)
    parser.add_argument("--library", required=True)
    parser.add_argument("--ringctl", required=True)
    args = parser.parse_args()
    nginx = shutil.which(args.nginx)
    for module in ("ndk_http_module.so", "ngx_http_lua_module.so"):
        if not os.path.exists(os.path.join(args.modules, module)):
            print("skipped: %s/%s is missing (Debian: libnginx-mod-http-lua)" % (
                args.modules, module))
            return 77
    if nginx is None:
        print("skipped: no nginx (Debian: nginx)")
        return 77
    args.nginx = nginx
    # A SIGTERM (ctest, a CI runner) still runs the cleanup below.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(1))
    test = test_class(args)
    try:
        test.run()
    except failure as e:
        print("not ok - %s" % e, file=sys.stderr)
        return 1
    except Exception:
        traceback.print_exc()
        return 1
    finally:
        test.cleanup()
    return 0
