"""Query-time search over a built release: the channels, their fusion and the engine that opens them."""
