"""Pure byte formats: TFRecord framing, hand-encoded protobuf wire bytes, PNG and WAV.

Nothing here knows about tags, writers or files; every function maps values to bytes (or
bytes back to values) and is tested on its own.
"""
