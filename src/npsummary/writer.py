"""``SummaryWriter``: the tensorboardX / ``torch.utils.tensorboard`` API on NumPy.

Call signatures follow tensorboardX 2.6 and torch, so existing training scripts switch by changing
one import. Differences, each a fix for a well-known complaint:

* Data reaches the file within ``flush_secs`` (default 2 s, not 120 s), and :meth:`flush` writes
  and fsyncs everything logged before it returns.
* The files are the ones tensorboardX and torch write (``simple_value`` scalars,
  ``Summary.Image``, ``Summary.Audio``, ``histo`` histograms, text tensors), so TensorBoard,
  ``EventAccumulator`` and tbparse read them as before; torch's ``new_style`` scalars too.
* ``add_scalars`` writes one sub-run per key, as tensorboardX and torch do, but all files share
  one background thread: each key costs one open file, not a thread, a queue and three
  descriptors.
* ``global_step=None`` uses the step given to :meth:`SummaryWriter.set_step` (0 until then).
* Bad input raises ``TypeError``/``ValueError`` naming the tag; nothing partial is written and the
  writer stays usable.
"""

from __future__ import annotations

from ._frontends.tbx.summary_writer import SummaryWriter

__all__ = ["SummaryWriter"]
