"""bench/compression_bench.py's helpers: the chunks cover C's rows in order with
their offsets from 0, and the delta columns give back every row's columns."""
import os
import sys
import unittest

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import compression_bench as cb  # noqa: E402


class CompressionScript(unittest.TestCase):
    def setUp(self):
        rng = np.random.default_rng(3)
        keep = np.ones(3000)
        keep[100:200] = 0  # empty rows: a chunk may start at one
        c = sp.diags_array(keep) @ sp.random_array((3000, 500), density=0.05, format="csr", rng=rng)
        c.eliminate_zeros()
        self.c = sp.csr_array(c)

    def test_chunks_cover_the_rows_in_order(self):
        old = cb.CHUNK_BYTES
        cb.CHUNK_BYTES = 4096  # many chunks
        try:
            blocks = cb.chunks(self.c)
        finally:
            cb.CHUNK_BYTES = old
        self.assertGreater(len(blocks), 10)
        self.assertEqual(sum(len(o) - 1 for o, _, _ in blocks), self.c.shape[0])
        for offsets, cols, vals in blocks:
            self.assertEqual(offsets[0], 0)
            self.assertEqual(offsets[-1], len(cols))
            self.assertEqual(len(vals), len(cols))
        np.testing.assert_array_equal(np.concatenate([c for _, c, _ in blocks]), self.c.indices)
        np.testing.assert_array_equal(np.concatenate([v for _, _, v in blocks]), self.c.data)

    def test_delta_columns_sum_back_to_the_columns(self):
        offsets = self.c.indptr.astype(np.int64)
        d = cb.delta_columns(offsets, self.c.indices.astype(np.int32))
        for r in range(self.c.shape[0]):
            lo, hi = offsets[r], offsets[r + 1]
            np.testing.assert_array_equal(np.cumsum(d[lo:hi]), self.c.indices[lo:hi])
        self.assertGreater(cb.compressed_bytes(cb.chunks(self.c), True), 0)


if __name__ == "__main__":
    unittest.main()
