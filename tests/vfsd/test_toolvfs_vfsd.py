"""sdk/toolvfs_vfsd.py against the real daemon ($TOOLVFS_BINARY)."""

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import unittest

import toolvfs_vfsd

SOURCE_DIR = os.environ.get("TOOLVFS_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))


class VfsdClientTest(unittest.TestCase):
    def setUp(self):
        self.project = tempfile.mkdtemp(prefix="toolvfs-vfsd-py-")
        os.makedirs(os.path.join(self.project, "logs"))
        with open(os.path.join(self.project, "logs", "a.txt"), "wb") as file:
            file.write(b"hello\n")
        self.args = ["--project", self.project, "--allow", "logs", "--no-audit"]

    def tearDown(self):
        shutil.rmtree(self.project)

    def read_file(self, path):
        with open(os.path.join(self.project, path), "rb") as file:
            return file.read()

    def test_every_op(self):
        with toolvfs_vfsd.VfsdClient.spawn(self.args) as vfsd:
            self.assertTrue(vfsd.ping())
            handle = vfsd.open_read("logs/a.txt")
            self.assertEqual(handle, 1)
            self.assertEqual(b"".join(vfsd.chunks(handle, 2)), b"hello\n")
            self.assertEqual(vfsd.seek(handle, -3, "end"), 3)
            self.assertEqual(vfsd.read(handle), (b"lo\n", True))
            self.assertEqual(vfsd.stat(handle=handle)["size"], 6)
            self.assertEqual(vfsd.stat("logs")["kind"], "dir")
            out = vfsd.open_write("logs/b.bin")
            vfsd.write_all(out, bytes(range(256)) * 10)
            self.assertFalse(os.path.exists(os.path.join(self.project, "logs", "b.bin")))
            vfsd.close(out)
            self.assertEqual(self.read_file("logs/b.bin"), bytes(range(256)) * 10)
            self.assertEqual([entry["name"] for entry in vfsd.list("logs")], ["a.txt", "b.bin"])
            temp = vfsd.temp()
            vfsd.write(temp, b"scratch")
            vfsd.seek(temp, 0)
            self.assertEqual(vfsd.read(temp), (b"scratch", True))
            r, w = vfsd.make_pipe()
            self.assertEqual(vfsd.read(r), (b"", False))
            self.assertEqual(vfsd.write(w, b"xyz"), 3)
            vfsd.close(w)
            self.assertEqual(vfsd.read(r), (b"xyz", False))
            self.assertEqual(vfsd.read(r), (b"", True))
            vfsd.init(allow=["logs"], read_only=True)
            with self.assertRaises(toolvfs_vfsd.VfsdError) as denied:
                vfsd.open_write("logs/c.txt")
            self.assertEqual(denied.exception.code, "E_PERM")
        self.assertEqual(vfsd.close_channel(), 0)

    def test_errors_carry_the_code_and_message(self):
        with toolvfs_vfsd.VfsdClient.spawn(self.args) as vfsd:
            for call, code in ((lambda: vfsd.open_read("logs/none"), "E_NOENT"),
                               (lambda: vfsd.open_read("secret.txt"), "E_PERM"),
                               (lambda: vfsd.read(42), "E_CLOSED"),
                               (lambda: vfsd.call("frobnicate"), "E_UNSUPPORTED"),
                               (lambda: vfsd.init(allow=["."]), "E_PERM")):
                with self.assertRaises(toolvfs_vfsd.VfsdError) as raised:
                    call()
                self.assertEqual(raised.exception.code, code)
                self.assertTrue(raised.exception.message)
            self.assertTrue(vfsd.ping())

    def test_socketpair_fd_mode(self):
        mine, theirs = socket.socketpair()
        binary = os.environ.get("TOOLVFS_BINARY", "toolvfs")
        process = subprocess.Popen([binary, "vfsd", *self.args, "--fd", str(theirs.fileno())],
                                   pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL)
        theirs.close()
        vfsd = toolvfs_vfsd.VfsdClient.from_socket(mine)
        self.assertTrue(vfsd.ping())
        self.assertEqual(b"".join(vfsd.chunks(vfsd.open_read("logs/a.txt"))), b"hello\n")
        vfsd.close_channel()
        mine.shutdown(socket.SHUT_WR)
        self.assertEqual(process.wait(timeout=30), 0)
        mine.close()

    def test_the_pipe_copy_example(self):
        data = os.urandom(1 << 20)
        with open(os.path.join(self.project, "big.bin"), "wb") as file:
            file.write(data)
        example = os.path.join(SOURCE_DIR, "examples", "vfsd", "pipe_copy.py")
        completed = subprocess.run([sys.executable, example, self.project, "big.bin", "copy.bin",
                                    os.environ.get("TOOLVFS_BINARY", "toolvfs")],
                                   capture_output=True, text=True, timeout=120)
        self.assertEqual(completed.returncode, 0, completed.stderr)
        self.assertIn("copied 1048576 bytes", completed.stdout)
        self.assertEqual(self.read_file("copy.bin"), data)


if __name__ == "__main__":
    unittest.main()
