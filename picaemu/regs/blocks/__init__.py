"""Register data, one module per block of the map (``ALL_BLOCKS``); ``picaemu.regs`` validates and indexes it."""

# picaemu: kernel constants (register ids and field positions compiled code freezes, ``picaemu.kernel_cache``)

from picaemu.regs.blocks import (
    fragops,
    framebuffer,
    gas,
    geometry,
    lighting,
    misc,
    proctex,
    raster,
    shader,
    tev,
    texturing,
)

ALL_BLOCKS = (misc, raster, texturing, proctex, tev, gas, fragops, framebuffer, lighting, geometry, shader)
