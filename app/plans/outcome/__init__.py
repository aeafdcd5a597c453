"""What running a plan means: its operations applied to a staged copy of the machine
(``staging``) and the difference read through the one sync model (``consequences``)."""
