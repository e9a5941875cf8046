"""codea1.sandbox"""
