#!/usr/bin/env bash
# Creates the environment; launches nothing.
uv venv .venv && uv pip install -r requirements.txt
