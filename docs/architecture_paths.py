"""Where the architecture pictures live (shared by the scripts that draw them)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SVG_PATH = ROOT / "docs" / "architecture.svg"
MD_PATH = ROOT / "docs" / "architecture.md"
BEGIN, END = "<!-- layers:begin -->", "<!-- layers:end -->"
