"""The one EventWriter behind every front end: event assembly, step and wall-time rules, the
logdir target and sink options, and which ranks write."""
