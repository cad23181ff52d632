"""The labs: notebook cells, the install cell, the kernel that runs them, launch links."""
