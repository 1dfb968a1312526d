"""picaemu: an emulator and debugger of the Nintendo 3DS PICA200 GPU."""
