"""Sample scenes built with picaemu.builder; ``python -m samples.generate`` writes captures and reference PNGs."""
