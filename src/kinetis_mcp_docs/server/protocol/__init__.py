"""The wire: JSON-RPC 2.0 envelopes, error codes and stdio framing. Knows nothing of docs."""
