"""The route on uvicorn: `serve --http` (`serve`, `listening`), its workers and their
drain, and the bounded HTTP/1.1 protocol (`connection`) holding `bounds` per connection."""
