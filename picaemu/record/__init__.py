"""Recording captures from a running program over the GDB remote serial protocol (``picaemu record``).

``gdb`` is the protocol client, ``memmap`` the 3DS virtual-to-physical address map, ``symbols`` the ELF symbol
lookup, ``gx`` the GX command words, ``reads`` what a command list makes the GPU read and write, ``recorder`` the
loop that ties them together. Documented for users in docs/capturing.md.
"""
