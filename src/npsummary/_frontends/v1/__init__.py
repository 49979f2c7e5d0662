"""The tf.compat.v1.summary API: summary ops, merge/merge_all, FileWriter and descriptions."""
