printf 'python zoo/cpu_raw/foreground_sigkill.py\nexit\n' | script -qc "PS1='$ ' bash --norc -i" /dev/null  # ANSI and CR removed, the terminal's echo of the typed input dropped
