"""codea1.rl"""
