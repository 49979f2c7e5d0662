"""The tf.summary API: summary functions, default writer, step and name scopes."""
