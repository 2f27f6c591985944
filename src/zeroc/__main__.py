from zeroc._cli import main

main(prog_name="zeroc")
