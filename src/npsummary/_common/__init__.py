"""The boundary every layer shares: argument conversion and checks, protobuf message rules, the
package's errors and warnings, type aliases and URL recognition. Imports only NumPy and the
standard library."""
