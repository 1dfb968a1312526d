"""Register data, one module per block of the map, in id order (``ALL_BLOCKS``)."""

from picaemu.regs.blocks import framebuffer, geometry, lighting, misc, raster, shader, tev, texturing

ALL_BLOCKS = (misc, raster, texturing, tev, framebuffer, lighting, geometry, shader)
