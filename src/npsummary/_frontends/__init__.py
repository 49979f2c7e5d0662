"""The three public APIs (tensorboardX/torch SummaryWriter, tf.summary, tf.compat.v1.summary) and
the per-thread state they share. No front end imports another."""
