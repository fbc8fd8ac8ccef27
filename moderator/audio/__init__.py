"""Audio as data: clips, WAV files, mixing and measuring. Pure: no devices here."""
