//! Co-simulation drivers (in progress).
