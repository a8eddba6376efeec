"""Waivers of a town requirement on one permit (Longmeadow §380-8, Southborough §6.2)."""
