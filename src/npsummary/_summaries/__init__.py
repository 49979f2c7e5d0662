"""Summary builders: validated values in, serialized ``Summary.Value`` bytes out.

One module per summary kind; each kind is built here and nowhere else, whichever front end
(``SummaryWriter``, the ``tf.summary`` functions or ``npsummary.v1``) asks for it:

* :mod:`.metadata` — plugin names, TensorFlow dtype numbers and ``SummaryMetadata`` bytes;
* :mod:`.tensor` — tensors (``TensorProto``), string arrays and the generic tensor value;
* :mod:`.scalar`, :mod:`.histogram`, :mod:`.image`, :mod:`.audio`, :mod:`.text` — one per kind,
  in each format a front end writes (TF2 tensors, TF1/tensorboardX legacy fields);
* :mod:`.nonfinite` — what happens to NaN and ±Inf (the ``nonfinite`` policy and its warning);
* :mod:`.events` — the events that carry no summary: session logs, graphs, run metadata.

Builders assume arguments already checked by :mod:`npsummary._common.convert` where they say
so, and name the tag in every error they raise themselves. Formats are described in docs/FORMAT.md.
"""
