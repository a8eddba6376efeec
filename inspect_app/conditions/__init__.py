"""Site conditions that change which inspections are owed: frozen conditions and snowmelt discharges (CGP 2022 Part 4)."""
