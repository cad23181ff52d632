"""How a block's process starts, is isolated and is killed as a group."""
