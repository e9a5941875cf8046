"""codea1.game"""
