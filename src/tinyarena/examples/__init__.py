"""Example models built with tinyarena.builder at run time (used by ``tinyarena demo``)."""
