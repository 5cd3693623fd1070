"""No temporary file outlives its writer (issue 27): Ctrl-C, SIGTERM and
SIGHUP during a rewrite remove the temporary; SIGKILL leaves nothing visible
where the filesystem has O_TMPFILE, and otherwise the next writer to the
same destination removes it (a live writer's temporaries, locked, are left
alone); a killed split's temporary folder is removed the same ways; a
dangling symlink at OUT is refused. The named-temporary paths run under an
LD_PRELOAD shim that makes O_TMPFILE fail (tests/cli/no_tmpfile.c)."""
import fcntl
import hashlib
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
import ztcli  # noqa: E402
from ztcli import ZT, objects, run  # noqa: E402

SHIM = os.environ.get("ZT_NO_TMPFILE_SHIM", "")


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def temp_names(folder):
    return sorted(f for f in os.listdir(folder) if ".zt-tmp-" in f or ".zt-export-" in f or f.startswith(".zt-split-"))


def dead_pid():
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def default_signals():
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, signal.SIG_DFL)


class TempFileTest(ztcli.TmpCase):
    @classmethod
    def setUpClass(cls):
        cls.fixture = ztcli.tempfile.mkdtemp(prefix="zt-cli-big-")
        # 64 MiB of incompressible-ish floats, stored raw: a zstd rewrite of
        # it takes a good part of a second, long enough to interrupt.
        rng = np.random.default_rng(7)
        np.save(os.path.join(cls.fixture, "big.npy"), rng.random(16 << 20, dtype=np.float32))
        run("convert", os.path.join(cls.fixture, "big.npy"), "-o", os.path.join(cls.fixture, "big.zt"), "--no-sync")

    @classmethod
    def tearDownClass(cls):
        ztcli.shutil.rmtree(cls.fixture, ignore_errors=True)

    def env(self, named):
        e = dict(os.environ)
        if named:
            self.assertTrue(SHIM and os.path.exists(SHIM), "the no_tmpfile shim was not built")
            e["LD_PRELOAD"] = SHIM
            # Under .ci/sanitize.sh the shim comes before ASan's runtime:
            # allowed, as it only forwards to the next open.
            e["ASAN_OPTIONS"] = ":".join(filter(None, [e.get("ASAN_OPTIONS"), "verify_asan_link_order=0"]))
        return e

    def start_and_signal(self, args, sig, named, watch):
        """Starts zt, waits until it has written > 1 MiB of a temporary in
        `watch`, sends `sig`; returns the exit status."""
        # zt leaves a signal it inherits ignored alone (nohup ignores SIGHUP,
        # a background job SIGINT and SIGQUIT): start it with the defaults,
        # whatever ran this test.
        proc = subprocess.Popen([ZT, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=self.env(named),
                                start_new_session=True, preexec_fn=default_signals)
        deadline = time.time() + 30
        sent = False
        while time.time() < deadline and proc.poll() is None:
            if ztcli.temp_being_written(proc.pid, watch) > (1 << 20):
                if named:  # the fallback really gives the temporary a name
                    self.assertTrue(temp_names(watch), "no named temporary with O_TMPFILE unavailable")
                os.kill(proc.pid, sig)
                sent = True
                break
            time.sleep(0.002)
        err = proc.communicate()[1]
        self.assertTrue(sent, "zt finished before it could be interrupted")
        return proc.returncode, err

    def rewrite_args(self, out):
        return ["compress", os.path.join(self.fixture, "big.zt"), "-o", out, "--zstd", "5", "--no-sync"]

    def check_signal(self, sig, named):
        out = self.path("out.zt")
        run("convert", os.path.join(self.fixture, "big.npy"), "-o", out, "--no-sync")  # a destination to keep
        before = sha(out)
        rc, err = self.start_and_signal(self.rewrite_args(out), sig, named, self.tmp)
        self.assertEqual(rc, -sig, err)  # ended by the signal itself, as if uncaught
        self.assertEqual(temp_names(self.tmp), [], "a temporary survived signal %d" % sig)
        self.assertEqual(sha(out), before, "the destination changed")
        return out

    def test_catchable_signals_remove_the_temporary(self):
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            for named in (False, True):
                with self.subTest(sig=sig, named=named):
                    self.check_signal(sig, named)

    def test_sigkill_leaves_nothing_visible_with_o_tmpfile(self):
        out = self.check_signal(signal.SIGKILL, named=False)
        run("verify", out)

    def test_sigkill_named_temporary_is_removed_by_the_next_writer(self):
        out = self.path("out.zt")
        run("convert", os.path.join(self.fixture, "big.npy"), "-o", out, "--no-sync")
        rc, _ = self.start_and_signal(self.rewrite_args(out), signal.SIGKILL, True, self.tmp)
        self.assertEqual(rc, -signal.SIGKILL)
        left = temp_names(self.tmp)
        self.assertEqual(len(left), 1, left)  # SIGKILL cannot be caught: the name stays...
        # ...until the next writer to the same destination (on the same
        # filesystem without O_TMPFILE).
        p = subprocess.run([ZT, "compress", os.path.join(self.fixture, "big.zt"), "-o", out, "--zstd", "1",
                            "--no-sync"], capture_output=True, text=True, env=self.env(True))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(temp_names(self.tmp), [])
        run("verify", out)

    def test_stale_cleanup_spares_live_writers(self):
        out = self.path("small.zt")
        np.save(self.path("small.npy"), np.arange(10, dtype=np.int32))
        run("convert", self.path("small.npy"), "-o", out)
        dead = dead_pid()
        stale = out + ".zt-tmp-%d-aaaaaa" % dead             # dead pid, unlocked: removed
        ours = out + ".zt-tmp-%d-bbbbbb" % os.getpid()       # live pid: kept
        locked = out + ".zt-tmp-%d-cccccc" % dead_pid()      # pid looks dead (another namespace), locked: kept
        other = self.path("other.zt.zt-tmp-%d-dddddd" % dead)  # another destination's: not ours to judge
        old_style = out + ".zt-tmp-Ab12Cd"                    # no pid (older writers): kept
        for p in (stale, ours, locked, other, old_style):
            with open(p, "wb") as f:
                f.write(b"partial")
        holder = open(locked, "rb")
        fcntl.flock(holder, fcntl.LOCK_EX)
        try:
            # A lock held by another process: the writer runs as a child,
            # on a "filesystem without O_TMPFILE" (where stale names occur).
            p = subprocess.run([ZT, "convert", self.path("small.npy"), "-o", out], capture_output=True, text=True,
                               env=self.env(True))
            self.assertEqual(p.returncode, 0, p.stderr)
        finally:
            holder.close()
        left = set(os.listdir(self.tmp))
        self.assertNotIn(os.path.basename(stale), left)
        for p in (ours, locked, other, old_style):
            self.assertIn(os.path.basename(p), left)

    def test_export_temporary_removed_on_sigterm(self):
        # The export of one big component to .npy streams through a
        # temporary "<out>.zt-export-<pid>-*" (named under the shim).
        out = self.path("big-export.npy")
        for named in (False, True):
            with self.subTest(named=named):
                rc, err = self.start_and_signal(
                    ["export", os.path.join(self.fixture, "big.zt"), "big", "-o", out], signal.SIGTERM, named,
                    self.tmp)
                if rc == 0:
                    continue  # finished before the signal landed: nothing to check but the result
                self.assertEqual(rc, -signal.SIGTERM, err)
                self.assertEqual(temp_names(self.tmp), [])
                self.assertFalse(os.path.exists(out))

    def split_args(self, outdir):
        return ["split", os.path.join(self.fixture, "many.zt"), "--max-shard-size", "4MiB", "-o", outdir]

    def make_many(self):
        many = os.path.join(self.fixture, "many.zt")
        if not os.path.exists(many):
            # One .npy per tensor (not one .npz: builds without libzip refuse those).
            rng = np.random.default_rng(3)
            inputs = []
            for i in range(24):
                inputs.append(os.path.join(self.fixture, "t%02d.npy" % i))
                np.save(inputs[-1], rng.random(1 << 20, dtype=np.float32))
            run("convert", *inputs, "-o", many, "--no-sync")

    def test_split_folder_removed_on_signal_and_after_sigkill(self):
        self.make_many()
        outdir = self.path("shards")
        os.mkdir(outdir)
        # Catchable: the temporary folder goes with the process.
        proc = subprocess.Popen([ZT, *self.split_args(outdir)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.time() + 30
        while time.time() < deadline and proc.poll() is None:
            folders = [f for f in os.listdir(outdir) if f.startswith(".zt-split-")]
            if folders and len(os.listdir(os.path.join(outdir, folders[0]))) >= 2:
                os.kill(proc.pid, signal.SIGTERM)
                break
            time.sleep(0.002)
        proc.communicate()
        self.assertEqual(proc.returncode, -signal.SIGTERM, "split ended before the signal")
        self.assertEqual(os.listdir(outdir), [])
        # SIGKILL: the folder stays, until the next split into OUTDIR.
        proc = subprocess.Popen([ZT, *self.split_args(outdir)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.time() + 30
        while time.time() < deadline and proc.poll() is None:
            folders = [f for f in os.listdir(outdir) if f.startswith(".zt-split-")]
            if folders and len(os.listdir(os.path.join(outdir, folders[0]))) >= 2:
                os.kill(proc.pid, signal.SIGKILL)
                break
            time.sleep(0.002)
        proc.communicate()
        self.assertEqual(proc.returncode, -signal.SIGKILL)
        self.assertEqual(len([f for f in os.listdir(outdir) if f.startswith(".zt-split-")]), 1)
        run("split", *self.split_args(outdir)[1:], "--quiet")
        self.assertEqual([f for f in os.listdir(outdir) if f.startswith(".zt-")], [])
        run("merge", os.path.join(outdir, "many.zt.index.json"), "-o", self.path("merged.zt"))
        self.assertEqual(len(objects(self.path("merged.zt"))), 24)

    def test_dangling_symlink_at_out_is_refused(self):
        np.save(self.path("small.npy"), np.arange(10, dtype=np.int32))
        run("convert", self.path("small.npy"), "-o", self.path("small.zt"))
        os.symlink(self.path("nowhere/made.zt"), self.path("link.zt"))
        os.mkdir(self.path("nowhere"))
        for args in (["convert", self.path("small.npy"), "-o", self.path("link.zt")],
                     ["compress", self.path("small.zt"), "-o", self.path("link.zt")],
                     ["migrate", self.path("small.zt"), "-o", self.path("link.zt")]):
            with self.subTest(cmd=args[0]):
                p = run(*args, check=False)
                self.assertNotEqual(p.returncode, 0)
                self.assertIn("dangling", p.stderr)
                self.assertFalse(os.path.exists(self.path("nowhere/made.zt")))
                self.assertTrue(os.path.islink(self.path("link.zt")))

    def test_new_outputs_take_the_umask_on_both_temporary_paths(self):
        # The temporary is created with 0666 and the kernel applies the
        # umask (issue 37: reading it with umask(0) + umask(mask) changed it
        # for the whole process). Named temporaries (no O_TMPFILE) were made
        # 0600 by mkostemp, then chmod-ed.
        np.save(self.path("small.npy"), np.arange(10, dtype=np.int32))
        run("convert", self.path("small.npy"), "-o", self.path("small.zt"))
        for named in (False, True):
            for mask in (0o027, 0o002):
                out_zt = self.path("u%o-%d.zt" % (mask, named))
                out_npy = self.path("u%o-%d.npy" % (mask, named))
                for args in (["compress", self.path("small.zt"), "-o", out_zt],
                             ["export", self.path("small.zt"), "small", "-o", out_npy]):
                    with self.subTest(named=named, mask=oct(mask), cmd=args[0]):
                        p = subprocess.run([ZT, *args], capture_output=True, text=True, env=self.env(named),
                                           preexec_fn=lambda m=mask: os.umask(m))
                        self.assertEqual(p.returncode, 0, p.stderr)
                        self.assertEqual(os.stat(args[-1]).st_mode & 0o7777, 0o666 & ~mask)


if __name__ == "__main__":
    import unittest
    unittest.main()
