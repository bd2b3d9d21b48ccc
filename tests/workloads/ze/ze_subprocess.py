"""Calls Level Zero through ctypes, runs subprocesses between the calls as a
Python program does (subprocess starts them with vfork, and a child whose exec
fails leaves with _exit), and prints what it called ("calls NAME COUNT")."""
import collections
import ctypes
import subprocess
import sys

counts = collections.Counter()
ze = ctypes.CDLL("libze_loader.so.1")


def call(name, *args):
    counts[name] += 1
    result = getattr(ze, name)(*args)
    if result != 0:
        sys.exit(f"{name} failed: {result:#x}")


ZE_INIT_FLAG_GPU_ONLY = 1
call("zeInit", ZE_INIT_FLAG_GPU_ONLY)
count = ctypes.c_uint32(1)
driver = ctypes.c_void_p()
call("zeDriverGet", ctypes.byref(count), ctypes.byref(driver))
version = ctypes.c_uint32()


def version_calls(n):
    for _ in range(n):
        call("zeDriverGetApiVersion", driver, ctypes.byref(version))


version_calls(10)
subprocess.run(["true"], check=True)
version_calls(20)
try:
    subprocess.run(["/nonexistent/ze-subprocess-program"])
    sys.exit("running a missing program succeeded")
except FileNotFoundError:
    pass
version_calls(30)
subprocess.run(["true"], check=True)
version_calls(40)
for name, n in sorted(counts.items()):
    print(f"calls {name} {n}")
