"""Where events go: the EventSink seam and every implementation (memory, local event files,
segment files on fsspec URLs), with the background flusher, pending-event state and the projector
files that sit beside a run."""
