"""The reader's storage layer: listing a sweep and fetching its objects.

The rest of the reader calls one function, :func:`.sweep.open_sweep`: the runs under a path and
the :class:`~npsummary.reader.FileSystem` to read their files through. On a store that lists
recursively and fetches concurrently (an :class:`.store.ObjectStore`: s3fs, gcsfs and every
async fsspec filesystem; boto3 for ``s3://`` without s3fs), that is one recursive listing and
files served from many fetches in flight; elsewhere (the local disk, a registered or synchronous
filesystem) it is the directory walk of :mod:`npsummary.reader._discover` and the filesystem
itself, read as before.

Modules: ``store`` (the interface), ``options`` (how many requests and bytes in flight, how many
attempts), ``retry`` (which failures are tried again, the error that names the object),
``listing`` (runs from a listing, as the walk finds them), ``prefetch`` (files served in order
from a bounded window of fetches), ``fsspec_store`` and ``boto_store`` (the two ways to a store),
``sweep`` (the entry point).
"""
