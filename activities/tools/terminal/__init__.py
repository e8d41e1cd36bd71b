"""The `terminal` tool (seed 004): shells on PTYs run commands an agent proposes and a person approves."""
